r"""The classification losses of the Pegasos estimators (linear and kernel).

Each loss is given by the code the compiled loop (``_pegasos_jit``) switches on,
and by its value at a zero margin, :math:`\ell(0)`, which bounds the optimum:
:math:`F(w^*, b^*) \le F(0, 0) = nC\,\ell(0)`, so :math:`\lVert w^*\rVert \le
\sqrt{2nC\,\ell(0)}` (the projection radius):

* ``"hinge"``: :math:`\ell(z) = \max(0, 1 - z)`, :math:`\ell(0) = 1`;
* ``"log"``: :math:`\ell(z) = \log(1 + e^{-z})`, :math:`\ell(0) = \log 2`;
* ``"exp"``: :math:`\ell(z) = e^{-z}`, :math:`\ell(0) = 1`.
"""
from __future__ import annotations

import math

from .._compiled import loops

# the compiled loops (compiled at installation where they can be)
_jit = loops("structsvm.svm._pegasos_jit")

_CLASSIFICATION_LOSSES = {"hinge": _jit.HINGE, "log": _jit.LOG, "exp": _jit.EXP}
_LOSS_AT_ZERO = {"hinge": 1.0, "log": math.log(2.0), "exp": 1.0}
