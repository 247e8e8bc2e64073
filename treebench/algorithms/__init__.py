"""Tree learners. Each module registers its estimator in `treebench.registry.ALGORITHMS`."""
