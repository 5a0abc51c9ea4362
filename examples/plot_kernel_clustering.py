"""
====================================================
Learning a low-rank kernel from pairs for clustering
====================================================

Kernel mode of the LogDet learner (Kulis, Sustik & Dhillon, 2009, Alg. 2): start from
a rank-16 factor ``G₀`` of an RBF kernel over the digits 3, 8 and 9, add similar /
dissimilar pairs, and learn the kernel ``K = G Gᵀ`` nearest to ``K₀ = G₀ G₀ᵀ`` in
LogDet divergence that satisfies them. The learned kernel keeps rank 16, and every projection costs
``O(16²)`` whatever the number of points. Clustering quality is measured as in their
§7.1: normalised mutual information (NMI) between the classes and the clusters
of kernel k-means — which, for ``K = G Gᵀ``, is k-means on the rows of ``G``.
"""

# %%
# The data and the starting factor: the top 16 eigenpairs of the RBF kernel.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits
from sklearn.metrics import normalized_mutual_info_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler

from psdmetric import LogDet, pairs_from_labels

X, y = load_digits(return_X_y=True)
keep = np.isin(y, [3, 8, 9])
X, y = StandardScaler().fit_transform(X[keep]), y[keep]
eigenvalues, eigenvectors = np.linalg.eigh(rbf_kernel(X, gamma=1.0 / X.shape[1]))
G0 = eigenvectors[:, -16:] * np.sqrt(eigenvalues[-16:])
print(f"{len(X)} digits, starting factor G0 of shape {G0.shape}")


def clustering_nmi(factor, seed):
    clusters = KMeans(n_clusters=3, n_init=3, random_state=seed).fit_predict(factor)
    return normalized_mutual_info_score(y, clusters)


# %%
# Learn the kernel from an increasing number of random pairs (three draws each),
# and cluster its factor.
n_pairs = [25, 50, 100, 200, 400]
seeds = range(3)
baseline = np.mean([clustering_nmi(G0, seed) for seed in seeds])
learned = np.zeros((len(n_pairs), len(seeds)))
for i, n in enumerate(n_pairs):
    for j, seed in enumerate(seeds):
        pairs = pairs_from_labels(y, n_constraints=n, random_state=seed)
        learner = LogDet(prior="identity", random_state=seed).fit(G0, constraints=pairs)
        learned[i, j] = clustering_nmi(learner.transform(G0), seed)
    print(f"{n:>4} pairs: NMI {learned[i].mean():.3f} ± {learned[i].std():.3f}")
print(f"starting kernel: NMI {baseline:.3f}")

# %%
fig, ax = plt.subplots(figsize=(5.5, 4))
ax.errorbar(n_pairs, learned.mean(axis=1), yerr=learned.std(axis=1), marker="o",
            capsize=3, label="learned kernel (LogDet)")
ax.axhline(baseline, color="gray", linestyle="--", label="starting RBF kernel")
ax.set_xscale("log")
ax.minorticks_off()
ax.set_xticks(n_pairs, [str(n) for n in n_pairs])
ax.set_xlabel("number of pair constraints")
ax.set_ylabel("NMI of kernel k-means")
ax.set_title("digits 3, 8, 9: rank-16 kernel")
ax.legend()
fig.tight_layout()
plt.show()

# %%
# A few hundred pairs — a small fraction of the 143,916 pairs of 537 points — raise
# the agreement between clusters and classes well above the starting kernel's.
