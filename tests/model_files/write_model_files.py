"""Write the model files of this folder (run once, by the version whose files they
are; the test ``tests/test_old_model_files.py`` loads them with the current one).

    python tests/model_files/write_model_files.py

Each ``<name>.npz`` is a fitted model (``checkpoint.npz`` a checkpoint of a fit); ``expected.json`` holds, per file, the
version that wrote it and its predictions on the test inputs of
:mod:`inputs` (rebuilt there from fixed seeds).
"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main():
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent))
    import structsvm
    import structsvm.features as F
    from structure_examples import MultiLabel

    from inputs import as_json, data

    attributes = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0], "z": [2.0, -1.0]}
    tree = {"animal": ["cat", "dog"], "plant": ["oak", "fern"], "root": ["animal", "plant"]}
    learners = structsvm.learners
    losses = structsvm.losses
    specs = {
        "multiclass": dict(feature_map=F.MulticlassFeatures(bias=1.0)),
        "multiclass_attributes": dict(feature_map=F.MulticlassFeatures(attributes=attributes)),
        "multiclass_hamming_one_slack": dict(
            feature_map=F.MulticlassFeatures(), loss=losses.HammingLoss(normalize=True),
            learner=learners.OneSlackCuttingPlane(cache_size=5)),
        "taxonomy": dict(feature_map=F.TaxonomyFeatures(tree=tree),
                         loss=losses.TreeDistanceLoss()),
        "sequence": dict(feature_map=F.SequenceFeatures(features="pos")),
        "sequence_matrices": dict(feature_map=F.SequenceFeatures(), learner="one_slack"),
        "ranking": dict(feature_map=F.RankingFeatures(), loss=losses.SwappedPairsLoss()),
        "grammar": dict(feature_map=F.GrammarFeatures(markov=1),
                        loss=losses.SpanLoss(normalize=True)),
        "graph": dict(feature_map=F.GraphFeatures(bias=1.5, directed=("chain",))),
        "alignment": dict(feature_map=F.AlignmentFeatures(),
                          loss=losses.AlignmentLoss()),
        "structure": dict(feature_map=MultiLabel(n_labels=3)),
    }
    expected = {}
    for name, params in specs.items():
        X, Y, X_test = data(name)
        model = structsvm.fit(X, Y, C=1.0, max_iter=30, **params)
        model.save(HERE / f"{name}.npz")
        expected[name] = {"written_by": structsvm.__version__,
                          "predictions": as_json(model.predict(X_test))}
        print(name, "written")
    # a checkpoint of the default learner (its dual state included), to resume from
    X, Y, X_test = data("sequence")
    model = structsvm.StructuredSVM(feature_map=F.SequenceFeatures(features="pos"),
                                    max_iter=5, tol=1e-4).fit(
        X, Y, checkpoint=HERE / "checkpoint.npz")
    expected["checkpoint"] = {"written_by": structsvm.__version__,
                              "predictions": as_json(model.predict(X_test))}
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
