"""The approx tokenizer's subadditivity check (model.ts excess()), shared by fit-approx.py and
trim-approx.py."""
import numpy as np


def excess(Q, NEXT, rp):
    """D[p, q] = max over strings b of the cost of b from state p minus from state q, for the
    integer cost table Q[state, class] and transitions NEXT[state, class]; the repeat column rp
    moves both readings alike. Returns (D, True), or (the last D, False) when it grows without
    bound (the machine is not subadditive)."""
    NS = Q.shape[0]
    D = np.zeros((NS, NS), np.int64)
    for _ in range(1000):
        V = Q[:, None, :] - Q[None, :, :] + D[NEXT[:, None, :], NEXT[None, :, :]]
        V[:, :, rp] = Q[:, None, rp] - Q[None, :, rp]
        ND = np.maximum(0, V.max(2))
        if (ND == D).all():
            return D, True
        D = ND
    return D, False


def load_model(fit_dir):
    """The state machine approx-features.ts wrote (model.json): NC, NS, NEXT[state, class], the
    state and class names, and each name's index."""
    import json, os
    M = json.load(open(os.path.join(fit_dir, 'model.json')))
    NC, NS = M['NC'], M['NS']
    SN, CN = M['STATE_NAMES'], M['CLASS_NAMES']
    return NC, NS, np.array(M['NEXT']).reshape(NS, NC), SN, CN, {n: i for i, n in enumerate(SN)}, {n: i for i, n in enumerate(CN)}
