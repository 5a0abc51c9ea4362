# The workspace of the diagonal-plus-rank-one eigen update ``diag(q) + ρ w wᵀ``, shared
# by the compiled modules that solve it (_secular), run it (_eigen_update) and use it
# (the von Neumann, MEG and DefiniteBoost kernels).

cdef struct Work:
    Py_ssize_t n
    # The deflated problem in solver coordinates: poles ascending, rho > 0; an
    # eigenvalue in solver coordinates times `sign` is an eigenvalue of the update.
    double sign
    double rho
    Py_ssize_t k
    Py_ssize_t ndefl
    Py_ssize_t nrot
    Py_ssize_t* col      # solver position -> index into Q and column of W
    double* all_poles           # all n poles, solver coordinates (rotated in place)
    double* all_components           # all n components of w/‖w‖, solver coordinates
    Py_ssize_t* ndpos    # solver positions of the k non-deflated poles
    double* p            # their poles, strictly ascending
    double* y            # their components
    double* y_squared           # their squares
    Py_ssize_t* dpos     # solver positions of deflated eigenpairs
    double* dval         # their eigenvalues (solver coordinates)
    double* dwt          # their weight (w_j/‖w‖)²: 0 after a rotation
    Py_ssize_t* rota
    Py_ssize_t* rotb
    double* rotc
    double* rots
    # Secular roots: lambda_i = porg[i] + tau[i], bracketed by porg[i] + (lb, ub).
    Py_ssize_t* org
    double* porg
    double* tau
    double* lb
    double* ub
    double* psi          # Σ_{j<=i} y_j²/(p_j − λ_i) and its derivative, at tau
    double* dpsi
    double* phi          # Σ_{j>i} y_j²/(p_j − λ_i) and its derivative, at tau
    double* dphi
    # The roots not yet converged (`act`: their indices) and, packed in the same order
    # so that the secular pass runs over contiguous memory, their pole of origin, tau,
    # and the four secular sums above.
    Py_ssize_t* act
    double* active_org
    double* active_tau
    double* active_psi
    double* active_dpsi
    double* active_phi
    double* active_dphi
    bint roots_valid
    Py_ssize_t prev_k
    double prev_sign
    Py_ssize_t* prev_ndpos
    # Spectrum of the update as seen from w: eigenvalues and weights (u_iᵀ w/‖w‖)².
    Py_ssize_t m
    double* lam
    double* wt
    double* ex
    double* acc
    # Scratch
    double* zhat
    double* v
    double* w
    double* what
    double* qnew
    Py_ssize_t* dord
    double* A
    double* B
    double* S
    double* W2
    # Counters for the benchmarks: secular passes and function evaluations.
    Py_ssize_t n_passes
    Py_ssize_t n_evaluations
