#!/usr/bin/env python3
"""
Step 3 of fitting the approx tokenizer, after approx-features.ts and fit-approx.py (whose linear
program no longer converges to a subadditive machine on today's model). Needs numpy and scipy.

  python3 bench/lib/trim-approx.py /tmp/approx-fit 42,7,99,123,11,13,17,19 [held-out seeds]

Lowers the mean over-count of the formats in TARGET (the issue's cap is 15%) by trimming the
costs of weights.ts STEP/SCALE of a token at a time, greedily: each step trims the transition
that lowers those formats' over-count most for the least it risks, counted on the training
seeds: 3 for each piece it leaves under max(o200k, cl100k), and 1 for each it brings from at
least MARGIN times that count to under it (the ones unseen text would tip under; a piece may
cost both). A step is kept only if every
format still counts at least the real count on FLOOR of its pieces (losing at most LOSS of that
share; a format already under FLOOR loses none) and the machine stays subadditive without
raising START (model.ts). The fixed columns (digits, surrogates, combining marks) and START are
never trimmed; the repeat column (RP) is, though a repeat costs at least its run floor, which
this linear reading leaves out. Rewrites the rows of weights.ts (or OUT); its header comment is edited by hand.
The counts here are the model's linear reading (no run floors): bench/calibrate-approx.ts
measures the real ones.
"""
import json, os, re, sys
import numpy as np
import scipy.sparse as sp
import approx_machine  # beside this file

here = os.path.dirname(os.path.abspath(__file__))
weights_file = os.path.join(here, '..', '..', 'plugins', 'tokenizers', 'approx', 'weights.ts')
fit_dir = sys.argv[1] if len(sys.argv) > 1 else '/tmp/approx-fit'
train_seeds = (sys.argv[2] if len(sys.argv) > 2 else '42,7,99,123,11,13,17,19').split(',')
test_seeds = sys.argv[3].split(',') if len(sys.argv) > 3 else []
TARGET = json.loads(os.environ.get('TARGET', '{"code": 0.145, "python": 0.146, "markdown": 0.143}'))
FLOOR = float(os.environ.get('FLOOR', '0.993'))
LOSS = float(os.environ.get('LOSS', '0.0005'))
STEP = int(os.environ.get('STEP', '64'))
MAX_STEPS = int(os.environ.get('MAX_STEPS', '400'))
MARGIN = float(os.environ.get('MARGIN', '1.02'))
MIN_GAIN = float(os.environ.get('MIN_GAIN', '2e-5'))
out_file = os.environ.get('OUT', weights_file)

NC, NS, NEXT, SN, CN, si, ci = approx_machine.load_model(fit_dir)
S0 = si['START']

source = open(weights_file).read()
SCALE = int(re.search(r'export const SCALE = (\d+)', source).group(1))
rows = re.findall(r'^  \[([0-9, ]+)\], // (\w+)$', source, re.M)
assert [name for _, name in rows] == SN, 'weights.ts does not match model.ts'
Q = np.array([[int(v) for v in r.split(',')] for r, _ in rows], np.int64)


def load(seeds):
    Xs, ys, Fs = [], [], []
    for seed in seeds:
        d = json.load(open(os.path.join(fit_dir, f'features-{seed}.json')))
        Xs.append(sp.csr_matrix(np.array(d['X'], np.float64)))
        ys.append(np.maximum(np.array(d['o']), np.array(d['c'])).astype(np.float64))
        Fs.append(np.array(d['f']))
    return sp.vstack(Xs).tocsc(), np.concatenate(ys), np.concatenate(Fs)


def subadditive(Q):
    """No continuation from any state costs more than from START. (startExcess's repeat case
    reads the RP column against START: trimming RP only lowers it; its run floors read START
    alone, which is not trimmed.)"""
    D, bounded = approx_machine.excess(Q, NEXT, ci['RP'])
    return bounded and D[:, S0].max() == 0


def report(name, X, y, F, Q):
    r = np.ceil(X @ Q.reshape(-1) / SCALE) / y
    print(name)
    for f in dict.fromkeys(F):
        rr = r[F == f]
        print(f'  {f:12} {len(rr):6} pieces  >= max: {100 * (rr >= 1).mean():6.2f}%  mean over-count: {100 * (rr.mean() - 1):5.2f}%')


X, y, F = load(train_seeds)
formats = list(dict.fromkeys(F))
masks = {f: F == f for f in formats}
sizes = {f: masks[f].sum() for f in formats}
report('before, train', X, y, F, Q)
assert subadditive(Q), 'weights.ts is not subadditive to begin with'

fixed_cols = {ci[c] for c in ('DG', 'HI', 'LS', 'MK')}
sums = X @ Q.reshape(-1).astype(np.float64)
start_share = {f: (np.ceil(sums / SCALE)[masks[f]] >= y[masks[f]]).mean() for f in formats}
floor = {f: max(FLOOR, start_share[f] - LOSS) if start_share[f] >= FLOOR else start_share[f] for f in formats}
indptr, indices, data = X.indptr, X.indices, X.data
rejected = set()
for step in range(MAX_STEPS):
    counts = np.ceil(sums / SCALE)
    over = {f: (counts[masks[f]] / y[masks[f]]).mean() - 1 for f in TARGET}
    if all(over[f] <= cap for f, cap in TARGET.items()):
        break
    weight = {f: 1.0 / sizes[f] if over[f] > TARGET[f] else 0.0 for f in TARGET}
    at_or_over = {f: (counts[masks[f]] >= y[masks[f]]).sum() for f in formats}
    best = None
    for s in range(NS):
        if s == S0:
            continue
        for c in range(NC):
            k = s * NC + c
            if c in fixed_cols or Q[s, c] < STEP or k in rejected:
                continue
            lo, hi = indptr[k], indptr[k + 1]
            if lo == hi:
                continue
            rowsk = indices[lo:hi]
            new = np.ceil((sums[rowsk] - STEP * data[lo:hi]) / SCALE)
            old = counts[rowsk]
            fk = F[rowsk]
            gain = sum(weight.get(f, 0.0) * ((old - new)[fk == f] / y[rowsk][fk == f]).sum() for f in TARGET)
            if gain <= 0 or gain < MIN_GAIN:
                continue
            flipped = (old >= y[rowsk]) & (new < y[rowsk])
            lost = {f: flipped[fk == f].sum() for f in formats}
            if any(at_or_over[f] - lost[f] < floor[f] * sizes[f] for f in formats):
                continue
            # Pieces brought within MARGIN of their real count are the ones that unseen text
            # would flip: they are priced too, so that a step free on the training seeds is not
            # taken for nothing.
            near = (old >= MARGIN * y[rowsk]) & (new < MARGIN * y[rowsk])
            price = sum((3 * lost[f] + near[fk == f].sum()) / sizes[f] for f in formats) + 1e-7
            if best is None or gain / price > best[0]:
                best = (gain / price, s, c)
    if best is None:
        break
    _, s, c = best
    Q[s, c] -= STEP
    if not subadditive(Q):
        Q[s, c] += STEP
        rejected.add(s * NC + c)
        continue
    k = s * NC + c
    sums[indices[indptr[k]:indptr[k + 1]]] -= STEP * data[indptr[k]:indptr[k + 1]]
    print(f'step {step}: {SN[s]}/{CN[c]} -> {Q[s, c]}  (over-count before it: ' + ' '.join(f'{f} {100 * over[f]:.2f}%' for f in TARGET) + ')', flush=True)
else:
    print(f'stopped after {MAX_STEPS} steps (MAX_STEPS) short of TARGET', file=sys.stderr)

counts = np.ceil(sums / SCALE)
short = {f: round(100 * ((counts[masks[f]] / y[masks[f]]).mean() - 1), 2) for f, cap in TARGET.items() if (counts[masks[f]] / y[masks[f]]).mean() - 1 > cap}
if short:
    print(f'warning: no safe step left; over TARGET still: {short}', file=sys.stderr)
report('after, train', X, y, F, Q)
if test_seeds:
    Xt, yt, Ft = load(test_seeds)
    report('held out, before', Xt, yt, Ft, np.array([[int(v) for v in r.split(',')] for r, _ in rows], np.int64))
    report('held out, after', Xt, yt, Ft, Q)
lines = source.split('\n')
for i, line in enumerate(lines):
    m = re.match(r'^  \[[0-9, ]+\], // (\w+)$', line)
    if m:
        lines[i] = '  [' + ', '.join(str(int(v)) for v in Q[si[m.group(1)]]) + '], // ' + m.group(1)
open(out_file, 'w').write('\n'.join(lines))
print('wrote', os.path.relpath(out_file))
