"""treebench from Python: binarize, fit each family of learners, compare, tune, print a tree.

The example of the Python API guide (docs/python-guide.md); tests/docs/test_examples.py runs it,
so every line here works with the code as it is. Run it with `python docs/examples/api_guide.py`.
"""

from __future__ import annotations

from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline

from treebench import DPDTClassifier, GOSDTClassifier, NGIECARTClassifier, TopKClassifier
from treebench.binarize import make_binarizer
from treebench.tree.export import conditions_from_columns, export_text

# --- 1. a numeric frame, split into training and test rows ---------------------------------
data = load_breast_cancer(as_frame=True)
X = data.data.iloc[:, :10]                        # ten numeric features (mean radius, ...)
y = data.target.map({0: "malignant", 1: "benign"})
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0,
                                                    stratify=y)

# --- 2. 0/1 columns from quantile thresholds, fitted on the training rows only -------------
binarizer = make_binarizer("quantile", {"max_splits": 4}).set_output(transform="pandas")
B_train = binarizer.fit_transform(X_train)
print(f"{X_train.shape[1]} features -> {B_train.shape[1]} binary columns, e.g.",
      list(binarizer.get_feature_names_out()[:3]))

# --- 3. one learner of each family, each in a pipeline behind its own binarizer -------------
learners = {
    "Top-k (k=4)": TopKClassifier(k=4, max_depth=3),
    "DPDT": DPDTClassifier(max_depth=3),
    "GOSDT": GOSDTClassifier(regularization=0.01, max_depth=3),
    "ECART": NGIECARTClassifier(lam=1.0),
}
scores = {}
for name, learner in learners.items():
    model = make_pipeline(make_binarizer("quantile", {"max_splits": 4}), learner)
    model.fit(X_train, y_train)                   # the binarizer sees the training rows only
    scores[name] = (model.score(X_train, y_train), model.score(X_test, y_test),
                    model[-1].tree_.n_leaves)
print(f"\n{'learner':<12} {'train':>6} {'test':>6} {'leaves':>6}")
for name, (train, test, leaves) in scores.items():
    print(f"{name:<12} {train:6.3f} {test:6.3f} {leaves:6d}")

# --- 4. tune k and the depth of Top-k by cross-validation on the training rows --------------
pipe = make_pipeline(make_binarizer("quantile", {"max_splits": 4}), TopKClassifier())
search = GridSearchCV(pipe, {"topkclassifier__k": [1, 2, 4],
                             "topkclassifier__max_depth": [2, 3]}, cv=3)
search.fit(X_train, y_train)
print("\nbest parameters:", search.best_params_,
      f"cross-validated accuracy {search.best_score_:.3f},",
      f"test accuracy {search.score(X_test, y_test):.3f}")

# --- 5. the chosen tree as readable rules -----------------------------------------------------
best = search.best_estimator_
fitted_binarizer, tree_model = best[0], best[-1]
names, conditions = conditions_from_columns([c.to_dict() for c in fitted_binarizer.columns_])
print()
print(export_text(tree_model.tree_, names, list(tree_model.classes_), conditions))
