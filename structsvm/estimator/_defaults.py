"""Every default of structsvm, read from the code: as data and as a markdown page.

The documentation's "Defaults" page is generated from :func:`defaults_markdown` when
the site is built, so the tables there cannot drift from the code: the feature maps'
class attributes (``structure``, ``default_decoder``, ``default_loss``, ``default_C``,
``default_tol``), the learner registry and the default learner per structure
(:data:`structsvm.learners.DEFAULT_LEARNERS`, ``SPECIALISED_DEFAULTS``,
``DEFAULT_PARAMS``), the learners' and the estimator's signatures, and the decoder and
loss registries.
"""
from __future__ import annotations

import ast
import inspect
import textwrap

from .. import features, learners
from .._compiled import _table as _kernel_table
from . import StructuredSVM
from ..registry import DECODERS
from ..structures.decoders import get_decoder
from ..registry import LOSSES

__all__ = ["feature_maps", "structure_defaults", "learner_defaults",
           "estimator_defaults", "decoder_names", "loss_names", "compiled_kernels",
           "defaults", "defaults_markdown"]

def feature_maps():
    """The feature-map classes registered in :data:`structsvm.registry.FEATURE_MAPS`,
    in registration order (each once)."""
    return list(dict.fromkeys(features.FEATURE_MAPS.values()))


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
    for name, cls in learners.LEARNERS.items():
        out[name] = {"class": cls.__name__, "module": cls.__module__,
                     "params": dict(cls().get_params()),
                     "max_iter": _max_iter_default(cls)}
    return out


def structure_defaults():
    """One row per feature map: what ``StructuredSVM`` uses when a parameter is None.

    Returns
    -------
    list of dict
        Keys: ``feature_map`` (class name), ``structure``, ``decoder``, ``loss``,
        ``C``, ``tol``, ``learner`` (the default learner's name), ``learner_params``
        (the parameters it is configured with for this structure, where they differ
        from its own defaults), ``max_iter`` (the default learner's), ``specialised``
        (a learner preferred when it accepts the problem, or None) and
        ``specialised_max_iter``.
    """
    rows = []
    for cls in feature_maps():
        structure = cls.structure
        name = learners.DEFAULT_LEARNERS.get(structure, learners.DEFAULT_LEARNERS[None])
        configured = learners.make_default_learner(structure)
        own = learners.LEARNERS[name]().get_params()
        params = {k: v for k, v in configured.get_params().items() if own[k] != v}
        special = learners.SPECIALISED_DEFAULTS.get(structure)
        rows.append({
            "feature_map": cls.__name__, "module": cls.__module__,
            "structure": structure, "decoder": cls.default_decoder,
            "loss": cls.default_loss, "C": cls.default_C, "tol": cls.default_tol,
            "learner": name, "learner_params": params,
            "max_iter": _max_iter_default(learners.LEARNERS[name]),
            "specialised": special,
            "specialised_max_iter": (None if special is None else
                                     _max_iter_default(learners.LEARNERS[special])),
        })
    return rows


def estimator_defaults():
    """``{parameter: default}`` of :class:`~structsvm.StructuredSVM`."""
    return _signature_defaults(StructuredSVM.__init__)


def decoder_names():
    """``{name: structure}`` of every registered decoder."""
    get_decoder("argmax")  # loads the built-in decoders
    return {name: d.structure for name, d in DECODERS.items()}


def loss_names():
    """``{name: class name}`` of every registered loss."""
    return {name: cls.__name__ for name, cls in LOSSES.items()}


def compiled_kernels():
    """``(module, function, argument types)`` of every kernel compiled at
    installation (:data:`structsvm._compiled._table.KERNELS`)."""
    return [(*_kernel_table.split_key(key), args)
            for key, (args, _) in _kernel_table.KERNELS.items()]


def defaults():
    """All of the above in one dict (``structures``, ``learners``, ``estimator``,
    ``decoders``, ``losses``, ``compiled_kernels``)."""
    return {"structures": structure_defaults(), "learners": learner_defaults(),
            "estimator": estimator_defaults(), "decoders": decoder_names(),
            "losses": loss_names(), "compiled_kernels": compiled_kernels()}


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
             "`learner`, `C`, `tol` or `max_iter` is None. The learner comes from "
             "`structsvm.learners.DEFAULT_LEARNERS` (structures it does not name get "
             f"{_code(learners.DEFAULT_LEARNERS[None])}), configured with "
             "`DEFAULT_PARAMS`; a specialised learner "
             "(`SPECIALISED_DEFAULTS`) replaces it, at its own defaults, when it "
             "accepts the fitted problem. `max_iter` is the default learner's own.", ""]
    rows = []
    for r in d["structures"]:
        learner = f"`{r['learner']}`"
        if r["learner_params"]:
            learner += f" (`{_kwargs(r['learner_params'])}`)"
        max_iter = _num(r["max_iter"])
        if r["specialised"]:
            learner = (f"`{r['specialised']}` when it accepts the problem, "
                       f"otherwise {learner}")
            max_iter = f"{_num(r['specialised_max_iter'])} / {max_iter}"
        rows.append((f"`{r['feature_map']}`", f"`{r['structure']}`",
                     f"`{r['decoder']}`", f"`{r['loss']}`", learner,
                     _num(r["C"]), _num(r["tol"]), max_iter))
    parts += [_table(("feature map", "structure", "decoder", "loss", "learner", "C",
                      "tol", "max_iter"), rows), ""]

    parts += ["## Learners", "",
              "Every registered learner (`structsvm.learners.LEARNERS`), its "
              "constructor's defaults, and the `max_iter` it runs when the "
              "estimator's `max_iter` is None.", ""]
    rows = [(f"`{name}`", f"`{info['class']}`",
             f"`{_kwargs(info['params'])}`" if info["params"] else "–",
             _num(info["max_iter"])) for name, info in d["learners"].items()]
    parts += [_table(("name", "class", "parameters", "max_iter"), rows), ""]

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
    parts += ["The registered losses (`loss=` names):", ""]
    rows = [(f"`{n}`", f"`{c}`") for n, c in d["losses"].items()]
    parts += [_table(("loss", "class"), rows), ""]

    parts += ["## Kernels compiled at installation", "",
              "The numba kernels `setup.py` compiles ahead of time into "
              f"`{_kernel_table.MODULE}` ([First run](first_run.md)), with the argument "
              "types a call must have to run that code (`f8:2`: float64, 2-D, "
              "C-contiguous array; `i4:1`: int32 array; `i8`, `f8`, `b1`: int64, "
              "float64 and bool scalars); a call with other types runs numba's JIT "
              "version. Every other kernel is compiled by numba on its first use.", ""]
    rows = [(f"`{function}`", f"`{module}`", f"`{args}`")
            for module, function, args in d["compiled_kernels"]]
    parts += [_table(("kernel", "module", "argument types"), rows), ""]
    return "\n".join(parts)

