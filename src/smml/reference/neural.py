"""Plain numpy reference for ``smml.neural``: feed-forward networks trained by SGD
(003 section 14), backpropagation written from the chain rule, one example at a time.

For an example (x, y) and layers a_0 = x, z_l = a_{l-1} W_l + b_l, a_l = sigma(z_l)
(hidden layers), z_L the output scores, l(y, z_L) the loss:

    dl/dz_L   from the loss (softmax + log loss: p - y; logistic: -y / (1 + e^{y z});
              square: 2 (z - y)),
    dl/dW_l   = a_{l-1}^T dl/dz_l,    dl/db_l = dl/dz_l,
    dl/dz_{l-1} = (dl/dz_l W_l^T) * sigma'(z_{l-1}),

with sigma' computed from z by differentiating each activation's formula
(independently of the kernel, which uses sigma' written through a = sigma(z)).
A step on a batch uses the mean of the examples' gradients plus lam W
(the biases are not penalised); 003's update is the batch of one.

``numerical_gradient`` gives central finite differences of the same mean loss,
for the gradient check. ``MLPClassifier`` / ``MLPRegressor`` run the whole
algorithm of ``smml.neural`` (initialisation, the order of the examples, the
stopping rule) in plain Python, for the tests, ``smml tour`` and the benchmarks.
"""
import math

import numpy as np

__all__ = ["activation", "activation_derivative", "forward", "example_gradient", "batch_gradient",
           "mean_loss", "numerical_gradient", "sgd_epoch", "init_params", "MLPClassifier",
           "MLPRegressor"]


# ---- the pieces ---------------------------------------------------------------------

def activation(name, z):
    """sigma(z) for the hidden units."""
    z = np.asarray(z, dtype=np.float64)
    if name == "identity":
        return z.copy()
    if name == "relu":
        return np.where(z > 0, z, 0.0)
    if name == "tanh":
        return np.tanh(z)
    if name == "sigmoid":                  # the logistic function
        return np.array([1.0 / (1.0 + math.exp(-v)) if v >= 0 else math.exp(v) / (1.0 + math.exp(v))
                         for v in z.ravel()]).reshape(z.shape)
    if name == "sign_sigmoid":             # 003 section 14: (1 - e^{-z}) / (1 + e^{-z})
        out = []
        for v in z.ravel():
            e = math.exp(-abs(v))
            s = (1.0 - e) / (1.0 + e)
            out.append(s if v >= 0 else -s)
        return np.array(out).reshape(z.shape)
    raise ValueError(name)


def activation_derivative(name, z):
    """sigma'(z), differentiated from each formula (relu'(0) = 0)."""
    z = np.asarray(z, dtype=np.float64)
    if name == "identity":
        return np.ones_like(z)
    if name == "relu":
        return (z > 0).astype(np.float64)
    if name == "tanh":
        return 1.0 / np.cosh(z) ** 2
    if name == "sigmoid":
        s = activation("sigmoid", z)
        return s * (1.0 - s)
    if name == "sign_sigmoid":
        # d/dz (1 - e^{-z}) / (1 + e^{-z}) = 2 e^{-z} / (1 + e^{-z})^2 (even in z)
        e = np.exp(-np.abs(z))
        return 2.0 * e / (1.0 + e) ** 2
    raise ValueError(name)


def loss_and_slope(kind, z, y):
    """(l(y, z), dl/dz) for the output scores z of one example."""
    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if kind == "softmax":
        m = z.max()
        lse = m + math.log(float(np.sum(np.exp(z - m))))
        p = np.exp(z - lse)
        return float(np.sum(y * (lse - z))), p - y
    if kind == "logistic":
        yz = float(y[0] * z[0])
        loss = math.log1p(math.exp(-yz)) if yz > 0 else -yz + math.log1p(math.exp(yz))
        slope = -y[0] / (1.0 + math.exp(yz)) if yz < 700 else 0.0
        return loss, np.array([slope])
    if kind == "square":
        r = z - y
        return float(r @ r), 2.0 * r
    raise ValueError(kind)


def forward(x, coefs, intercepts, act):
    """(pre-activations z_1..z_L, activations a_0..a_{L-1}) for one example."""
    a = np.asarray(x, dtype=np.float64)
    zs, acts = [], [a]
    L = len(coefs)
    for l in range(L):
        z = a @ np.asarray(coefs[l], dtype=np.float64) + np.asarray(intercepts[l], dtype=np.float64)
        zs.append(z)
        if l < L - 1:
            a = activation(act, z)
            acts.append(a)
    return zs, acts


def example_gradient(x, y, coefs, intercepts, act, kind):
    """(loss, [dl/dW_l], [dl/db_l]) for one example, by the chain rule."""
    zs, acts = forward(x, coefs, intercepts, act)
    loss, delta = loss_and_slope(kind, zs[-1], y)
    L = len(coefs)
    gW, gb = [None] * L, [None] * L
    for l in range(L - 1, -1, -1):
        gW[l] = np.outer(acts[l], delta)
        gb[l] = delta.copy()
        if l > 0:
            delta = (np.asarray(coefs[l], dtype=np.float64) @ delta) * activation_derivative(act, zs[l - 1])
    return loss, gW, gb


def batch_gradient(X, Y, rows, coefs, intercepts, act, kind, lam=0.0):
    """(sum of the losses, mean gradient + lam W, mean bias gradient) over the given rows."""
    L = len(coefs)
    gW = [np.zeros(np.shape(c)) for c in coefs]
    gb = [np.zeros(np.shape(b)) for b in intercepts]
    total = 0.0
    for i in rows:
        loss, w, b = example_gradient(X[i], Y[i], coefs, intercepts, act, kind)
        total += loss
        for l in range(L):
            gW[l] += w[l]
            gb[l] += b[l]
    m = len(rows)
    for l in range(L):
        gW[l] = gW[l] / m + lam * np.asarray(coefs[l], dtype=np.float64)
        gb[l] = gb[l] / m
    return total, gW, gb


def mean_loss(X, Y, coefs, intercepts, act, kind, lam=0.0):
    """(1/m) sum_t l(y_t, f(x_t)) + lam/2 sum_l ||W_l||^2."""
    total = 0.0
    for i in range(len(X)):
        zs, _ = forward(X[i], coefs, intercepts, act)
        total += loss_and_slope(kind, zs[-1], Y[i])[0]
    pen = sum(float(np.sum(np.asarray(c, dtype=np.float64) ** 2)) for c in coefs)
    return total / len(X) + 0.5 * lam * pen


def numerical_gradient(X, Y, coefs, intercepts, act, kind, lam=0.0, h=1e-6, loss=None):
    """Central differences (f(w + h) - f(w - h)) / 2h of f = :func:`mean_loss` (or of
    ``loss``, called with the same arguments) in every weight."""
    loss = mean_loss if loss is None else loss
    coefs = [np.array(c, dtype=np.float64) for c in coefs]
    intercepts = [np.array(b, dtype=np.float64) for b in intercepts]
    out = []
    for group in (coefs, intercepts):
        grads = []
        for arr in group:
            g = np.zeros_like(arr)
            flat, gflat = arr.reshape(-1), g.reshape(-1)
            for j in range(flat.size):
                v = flat[j]
                flat[j] = v + h
                up = loss(X, Y, coefs, intercepts, act, kind, lam)
                flat[j] = v - h
                down = loss(X, Y, coefs, intercepts, act, kind, lam)
                flat[j] = v
                gflat[j] = (up - down) / (2 * h)
            grads.append(g)
        out.append(grads)
    return out[0], out[1]


def _eta(schedule, eta, t):
    if schedule == "inverse_sqrt":
        return eta / math.sqrt(t)
    if schedule == "inverse_t":
        return eta / t
    return eta


def sgd_epoch(X, Y, order, coefs, intercepts, act, kind, batch_size=1, eta=0.01,
              schedule="constant", momentum=0.0, lam=0.0, t0=0, velocities=None):
    """One epoch of SGD over ``order`` in steps of ``batch_size`` (003's update for 1):
    w <- w - eta_t (mean gradient + lam W), or with momentum v <- mu v - eta_t (...), w <- w + v.

    coefs / intercepts (float64 arrays) are updated in place; ``velocities`` is
    ([VW_l], [Vb_l]) when momentum > 0. Returns (sum of the example losses, steps).
    """
    n = len(order)
    total, t = 0.0, t0
    for start in range(0, n, batch_size):
        rows = list(order[start:start + batch_size])
        t += 1
        eta_t = _eta(schedule, eta, t)
        loss, gW, gb = batch_gradient(X, Y, rows, coefs, intercepts, act, kind, lam)
        total += loss
        for l in range(len(coefs)):
            if momentum > 0:
                VW, Vb = velocities
                VW[l][...] = momentum * VW[l] - eta_t * gW[l]
                Vb[l][...] = momentum * Vb[l] - eta_t * gb[l]
                coefs[l] += VW[l]
                intercepts[l] += Vb[l]
            else:
                coefs[l] -= eta_t * gW[l]
                intercepts[l] -= eta_t * gb[l]
    return total, t - t0


def init_params(rng, sizes, act):
    """The documented initialisation of ``smml.neural``: layer by layer, W_l uniform on
    [-r, r] drawn from ``rng`` (a RandomState) with r = sqrt(6 / fan_in) (He) for relu
    hidden layers and r = g sqrt(6 / (fan_in + fan_out)) (Glorot; gain g = 1 for
    identity / tanh and the output layer, 2 for sign_sigmoid, 4 for sigmoid) otherwise;
    biases 0."""
    gains = {"identity": 1.0, "tanh": 1.0, "sign_sigmoid": 2.0, "sigmoid": 4.0}
    coefs, intercepts = [], []
    L = len(sizes) - 1
    for l in range(L):
        fi, fo = sizes[l], sizes[l + 1]
        if l < L - 1 and act == "relu":
            r = math.sqrt(6.0 / fi)
        else:
            g = 1.0 if l == L - 1 else gains[act]
            r = g * math.sqrt(6.0 / (fi + fo))
        coefs.append(rng.uniform(-r, r, size=(fi, fo)))
        intercepts.append(np.zeros(fo))
    return coefs, intercepts


# ---- estimator-like references ---------------------------------------------------------

class _RefMLP:
    def __init__(self, hidden_layer_sizes=(100,), activation="relu", batch_size=1, learning_rate=0.01,
                 schedule="constant", momentum=0.0, lam=0.0, max_epochs=200, tol=1e-4,
                 n_iter_no_change=10, random_state=None):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.momentum = momentum
        self.lam = lam
        self.max_epochs = max_epochs
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state

    def _train(self, X, Y, kind):
        rng = np.random.RandomState(self.random_state)
        X = np.asarray(X, dtype=np.float64)
        n = X.shape[0]
        sizes = [X.shape[1], *self.hidden_layer_sizes, Y.shape[1]]
        self.coefs_, self.intercepts_ = init_params(rng, sizes, self.activation)
        vel = ([np.zeros_like(c) for c in self.coefs_], [np.zeros_like(b) for b in self.intercepts_])
        self.loss_curve_, best, count, t = [], np.inf, 0, 0
        self.n_iter_ = 0
        for _ in range(self.max_epochs):
            order = rng.permutation(n)
            total, steps = sgd_epoch(X, Y, order, self.coefs_, self.intercepts_, self.activation, kind,
                                     min(self.batch_size, n), self.learning_rate, self.schedule,
                                     self.momentum, self.lam, t, vel)
            t += steps
            self.n_iter_ += 1
            loss = total / n + 0.5 * self.lam * sum(float(np.sum(c ** 2)) for c in self.coefs_)
            self.loss_curve_.append(loss)
            count = count + 1 if loss > best - self.tol else 0
            best = min(best, loss)
            if count > self.n_iter_no_change:
                break
        self.n_steps_ = t
        return self

    def _scores(self, X):
        return np.array([forward(x, self.coefs_, self.intercepts_, self.activation)[0][-1]
                         for x in np.asarray(X, dtype=np.float64)])


class MLPClassifier(_RefMLP):
    """Reference classifier: binary = one logistic unit, more classes = softmax + log loss."""

    def fit(self, X, y):
        self.classes_, enc = np.unique(np.asarray(y), return_inverse=True)
        k = len(self.classes_)
        if k == 2:
            Y, kind = np.where(enc == 1, 1.0, -1.0)[:, None], "logistic"
        else:
            Y, kind = np.eye(k)[enc], "softmax"
        return self._train(X, Y, kind)

    def predict(self, X):
        s = self._scores(X)
        if s.shape[1] == 1:
            return self.classes_[(s[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(s, axis=1)]


class MLPRegressor(_RefMLP):
    """Reference regressor: identity outputs, square loss."""

    def fit(self, X, y):
        y = np.asarray(y, dtype=np.float64)
        self._one = y.ndim == 1
        return self._train(X, y.reshape(len(y), -1), "square")

    def predict(self, X):
        s = self._scores(X)
        return s[:, 0] if self._one else s
