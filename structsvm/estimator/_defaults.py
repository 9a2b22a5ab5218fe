"""Every default of structsvm, read from the code: as data and as a markdown page.

The documentation's "Defaults" page is generated from :func:`defaults_markdown` when
the site is built, so the tables there cannot drift from the code: the registered
structures' feature-map class attributes (``structure``, ``default_decoder``,
``default_loss``, ``default_C``, ``default_tol``, ``default_learners``), the learners'
and the estimator's signatures, the decoder and loss registries, and the loops
compiled at installation.
"""
from __future__ import annotations

import ast
import inspect
import textwrap

from .. import _compiled, limits
from .._compiled import _table as _loop_table
from ..protocols import CERTIFIED_STOPPING_RULE, capability
from ..registry import registered
from ._estimator import StructuredSVM

__all__ = ["feature_maps", "structure_defaults", "learner_defaults",
           "estimator_defaults", "decoder_names", "loss_names", "classifier_defaults",
           "compiled_loops", "defaults", "defaults_markdown"]


def feature_maps():
    """The feature-map classes of the registered structures, in registration order
    (each once)."""
    return list(dict.fromkeys(registered("structure").values()))


def _signature_defaults(func):
    """{parameter: default} of a callable's keyword parameters (no *args/**kwargs)."""
    return {p.name: p.default for p in inspect.signature(func).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.name != "self" and p.default is not p.empty}


def _max_iter_default(cls):
    """The number of rounds/passes/epochs a learner runs when ``max_iter`` is None.

    Read from the source of the learner's methods (its class and bases): the
    expression ``<default> if max_iter is None else ...``; ``<default>`` may be a
    literal, a module constant or a class attribute. None when not found.
    """
    for klass in cls.__mro__:
        if klass is object or not klass.__module__.startswith("structsvm"):
            continue
        module = inspect.getmodule(klass)
        try:
            src = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        for node in ast.walk(ast.parse(src)):
            if not (isinstance(node, ast.IfExp) and isinstance(node.test, ast.Compare)):
                continue
            test = node.test
            if not (isinstance(test.left, ast.Name) and test.left.id == "max_iter"
                    and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is)
                    and isinstance(test.comparators[0], ast.Constant)
                    and test.comparators[0].value is None):
                continue
            body = node.body
            if isinstance(body, ast.Constant):
                return body.value
            if isinstance(body, ast.Name):
                return getattr(module, body.id, None)
            if isinstance(body, ast.Attribute):
                return getattr(cls, body.attr, None)
    return None


def learner_defaults():
    """Every registered learner: ``{name: {"class", "params", "max_iter"}}``.

    ``params`` are the constructor's defaults (``get_params()`` of a fresh instance),
    ``max_iter`` what the learner runs when the estimator's ``max_iter`` is None.
    """
    out = {}
    for name, cls in registered("learner").items():
        out[name] = {"class": cls.__name__, "module": cls.__module__,
                     "params": dict(cls().get_params()),
                     "max_iter": _max_iter_default(cls),
                     "certifies_gap": bool(capability(cls, "certifies_gap")),
                     "stops_when": capability(cls, "stopping_rule")
                     or CERTIFIED_STOPPING_RULE}
    return out


def structure_defaults():
    """One row per feature map: what ``StructuredSVM`` uses when a parameter is None.

    Returns
    -------
    list of dict
        Keys: ``feature_map`` (class name), ``structure``, ``decoder``, ``loss``,
        ``C``, ``tol`` and ``learners``: the map's ``default_learners`` in order of
        preference, each ``(name, the parameters it is configured with where they
        differ from its own defaults, the max_iter it runs when max_iter is None)``.
    """
    rows = []
    learners = registered("learner")
    for cls in feature_maps():
        choices = []
        for name, params in cls.default_learners:
            own = learners[name]().get_params()
            choices.append((name, {k: v for k, v in params.items() if own[k] != v},
                            _max_iter_default(learners[name])))
        rows.append({
            "feature_map": cls.__name__, "module": cls.__module__,
            "structure": cls.structure, "decoder": cls.default_decoder,
            "loss": cls.default_loss, "C": cls.default_C, "tol": cls.default_tol,
            "learners": choices,
        })
    return rows


def estimator_defaults():
    """``{parameter: default}`` of :class:`~structsvm.StructuredSVM`."""
    return _signature_defaults(StructuredSVM.__init__)


def decoder_names():
    """``{name: structure}`` of every registered decoder."""
    return {name: d.structure for name, d in registered("decoder").items()}


def _loss_C(cls):
    """What a loss class says of C when none is given: its number, the summary of
    its ``default_C`` method, or None (the feature map's)."""
    own = capability(cls, "default_C")
    if callable(own):
        return (inspect.getdoc(own) or "a function of the training outputs").split(
            "\n\n")[0].replace("\n", " ")
    return own


def loss_names():
    """``{name: (class name, decomposition, default C, default tol)}`` of every
    registered loss (default C: a number, the text of its rule, or None for the
    feature map's; default tol: a number or None)."""
    return {name: (cls.__name__, cls.decomposition, _loss_C(cls),
                   capability(cls, "default_tol"))
            for name, cls in registered("loss").items()}


def classifier_defaults():
    """``{parameter: default}`` of :class:`structsvm.svm.PerformanceSVC`."""
    from ..svm.performance import PerformanceSVC

    return _signature_defaults(PerformanceSVC.__init__)


def compiled_loops():
    """``(module, function, argument types)`` of every loop compiled at
    installation (the ``SIGNATURES`` of the loop modules)."""
    return [(*_loop_table.split_key(key), args) for key, (args, _) in
            sorted(_compiled.signatures().items())]


def defaults():
    """All of the above in one dict (``structures``, ``learners``, ``estimator``,
    ``decoders``, ``losses``, ``classifier``, ``compiled_loops``)."""
    return {"structures": structure_defaults(), "learners": learner_defaults(),
            "estimator": estimator_defaults(), "decoders": decoder_names(),
            "losses": loss_names(), "classifier": classifier_defaults(),
            "compiled_loops": compiled_loops()}


# ---------------------------------------------------------------------- markdown
def _code(value):
    return f"`{value!r}`" if not isinstance(value, str) else f'`"{value}"`'


def _kwargs(params):
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def _num(value):
    return "–" if value is None else f"`{value!r}`"


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def defaults_markdown():
    """The tables of the documentation's "Defaults" page (markdown)."""
    d = defaults()
    parts = ["## Per structure", "",
             "What `StructuredSVM` uses for a feature map when `decoder`, `loss`, "
             "`learner`, `C`, `tol` or `max_iter` is None: the map's class attributes "
             "(`default_decoder`, `default_loss`, `default_C`, `default_tol`, "
             "`default_learners`), set in its structure's folder. The learner is the "
             "first of `default_learners` that accepts the fitted problem, with the "
             "parameters given there; `max_iter` is that learner's own.", ""]
    rows = []
    for r in d["structures"]:
        learners, max_iters = [], []
        for name, params, max_iter in r["learners"]:
            text = f"`{name}`" + (f" (`{_kwargs(params)}`)" if params else "")
            learners.append(text)
            max_iters.append(_num(max_iter))
        learner = learners[-1]
        if len(learners) > 1:
            learner = (" when it accepts the problem, otherwise ".join(learners))
        rows.append((f"`{r['feature_map']}`", f"`{r['structure']}`",
                     f"`{r['decoder']}`", f"`{r['loss']}`", learner,
                     _num(r["C"]), _num(r["tol"]), " / ".join(max_iters)))
    parts += [_table(("feature map", "structure", "decoder", "loss", "learner", "C",
                      "tol", "max_iter"), rows), ""]

    certified = [f"`{n}`" for n, info in d["learners"].items() if info["certifies_gap"]]
    parts += ["## The stopping rule: `tol`", "",
              f"The learners that certify a duality gap ({', '.join(certified)}) stop "
              f"at the first check where {CERTIFIED_STOPPING_RULE}. The gap bounds how "
              "far the objective ½‖w‖² + C Σ_i ξ_i is above the optimum, so the "
              "returned objective is within a relative `tol` of it: the same meaning "
              "for 100 or 100,000 examples, any C and any scale of the loss. A learner "
              "that reaches `max_iter` first returns the last certified w and a "
              "`ConvergenceWarning` that gives the relative gap it reached. The other "
              "learners stop as the table below says.", ""]

    parts += ["## Learners", "",
              "Every registered learner (`structsvm.registry.registered(\"learner\")`), its "
              "constructor's defaults, the `max_iter` it runs when the estimator's "
              "`max_iter` is None, and when it stops before that.", ""]
    rows = [(f"`{name}`", f"`{info['class']}`",
             f"`{_kwargs(info['params'])}`" if info["params"] else "–",
             _num(info["max_iter"]),
             "certified relative gap ≤ tol" if info["certifies_gap"]
             else info["stops_when"]) for name, info in d["learners"].items()]
    parts += [_table(("name", "class", "parameters", "max_iter", "stops when"), rows),
              ""]

    parts += ["## StructuredSVM", "",
              "The estimator's parameters and their defaults (None: per structure, "
              "above).", ""]
    rows = [(f"`{k}`", _code(v)) for k, v in d["estimator"].items()]
    parts += [_table(("parameter", "default"), rows), ""]

    parts += ["## Decoders and losses", "",
              "The registered decoders (`decoder=` names) and the structure each "
              "decodes (`any`: every structure whose outputs can be enumerated):", ""]
    rows = [(f"`{n}`", f"`{s}`") for n, s in d["decoders"].items()]
    parts += [_table(("decoder", "structure"), rows), ""]
    parts += ["The registered losses (`loss=` names), how each decomposes "
              "(`structsvm.protocols.DECOMPOSITIONS`) and the C and tol it trains with "
              "when they are None, where it declares them (`default_C`, "
              "`default_tol`; – : the feature map's):", ""]
    rows = [(f"`{n}`", f"`{c}`", f"`{dec}`",
             "–" if C is None else (_num(C) if not isinstance(C, str) else C),
             "–" if tol is None else _num(tol))
            for n, (c, dec, C, tol) in d["losses"].items()]
    parts += [_table(("loss", "class", "decomposition", "C", "tol"), rows), ""]

    parts += ["## PerformanceSVC", "",
              "The parameters of `structsvm.svm.PerformanceSVC`, the classifier "
              "trained for a measure of the whole data set, and their defaults (C "
              "None: the loss's, above).", ""]
    rows = [(f"`{k}`", _code(v)) for k, v in d["classifier"].items()]
    parts += [_table(("parameter", "default"), rows), ""]

    parts += ["## Memory budget", "",
              "The limit every size that comes from the input is checked against "
              "before it is allocated (weights, a fit's estimate, decoders' charts "
              "and traces, loaders' arrays): what it is, how a fit's memory is "
              "estimated and how to change it is on the Robustness page, [The memory "
              "budget](robustness.md#the-memory-budget).", ""]
    rows = [("limit", f"`structsvm.limits.MEMORY_FRACTION` = {_num(limits.MEMORY_FRACTION)}"
                      " of the physical memory available when the check runs"),
            ("override", "environment variable `STRUCTSVM_MAX_MEMORY` (bytes, or "
                         "`512M`, `4G`, ...; `0`: no limit)"),
            ("when the machine's memory is unknown",
             f"`structsvm.limits.MAX_MEMORY` = {_num(limits.MAX_MEMORY)} bytes "
             f"({limits.format_bytes(limits.MAX_MEMORY)})")]
    parts += [_table(("", "default"), rows), ""]

    parts += ["## Loops compiled at installation", "",
              "The numba loops `setup.py` compiles ahead of time into "
              f"`{_loop_table.MODULE}` ([First run](first_run.md)), as each loop "
              "module's `SIGNATURES` declares them, with the argument "
              "types a call must have to run that code (`f8:2`: float64, 2-D, "
              "C-contiguous array; `i4:1`: int32 array; `i8`, `f8`, `b1`: int64, "
              "float64 and bool scalars); a call with other types runs numba's JIT "
              "version. Every other loop is compiled by numba on its first use.", ""]
    rows = [(f"`{function}`", f"`{module}`", f"`{args}`")
            for module, function, args in d["compiled_loops"]]
    parts += [_table(("loop", "module", "argument types"), rows), ""]
    return "\n".join(parts)

