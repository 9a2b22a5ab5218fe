"""Parameters of a structure written in Python, read as scikit-learn reads an
estimator's (private).

:class:`~.structure.Structure` and :class:`~.structure.StructureMap` answer
``get_params`` and ``set_params`` with scikit-learn's conventions: the ``__init__``
arguments, stored under their own names; ``name__param`` reaches a parameter of a
parameter. scikit-learn's ``clone``, ``GridSearchCV`` over ``feature_map__param`` and
``StructuredSVM.get_params(deep=True)`` use nothing else of them. They do not
import scikit-learn: a worker process that receives a structure to decode (``n_jobs``)
imports the structure's module, and scikit-learn would be half of the worker's
start.
"""
from __future__ import annotations

import inspect

__all__ = ["Params"]


class Params:
    """``get_params`` / ``set_params`` / ``repr`` from the ``__init__`` signature."""

    @classmethod
    def _get_param_names(cls):
        """The ``__init__`` arguments, sorted (scikit-learn's order)."""
        init = cls.__init__
        if init is object.__init__:
            return []
        names = []
        for p in inspect.signature(init).parameters.values():
            if p.name == "self" or p.kind == p.VAR_KEYWORD:
                continue
            if p.kind == p.VAR_POSITIONAL:
                raise RuntimeError(f"{cls.__name__}.__init__ takes *{p.name}: a "
                                   "structure's parameters are named arguments (they "
                                   "are read back by name to copy it)")
            names.append(p.name)
        return sorted(names)

    def get_params(self, deep=True):
        """The parameters, by name; with ``deep``, also ``name__param`` for those of
        parameters that have parameters themselves.

        Returns
        -------
        dict
        """
        out = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{name}__{k}", v) for k, v in value.get_params().items())
            out[name] = value
        return out

    def set_params(self, **params):
        """Set parameters by name (``name__param``: a parameter's parameter).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A name that is not a parameter.
        """
        if not params:
            return self
        names = self._get_param_names()
        nested = {}
        for key, value in params.items():
            name, nest, sub = key.partition("__")
            if name not in names:
                raise ValueError(f"Invalid parameter {name!r} for {type(self).__name__}. "
                                 f"Valid parameters are: {names!r}.")
            if nest:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
        for name, sub in nested.items():
            getattr(self, name).set_params(**sub)
        return self

    def __repr__(self):
        """``Class(param=value, ...)`` with the parameters that differ from their
        defaults, as scikit-learn prints an estimator."""
        defaults = inspect.signature(type(self).__init__).parameters
        shown = []
        for name in self._get_param_names():
            value = getattr(self, name)
            default = defaults[name].default
            if default is inspect.Parameter.empty or repr(value) != repr(default):
                shown.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"
