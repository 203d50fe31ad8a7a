# Host emulation of cuda/attention/decode_mma.cuh (no GPU needed): a warp's scores and P V over 16 keys,
# f16 and q8_0 caches, every lane's fragments built with the header's index math and byte permutes
# (__byte_perm, the int8 -> f16 trick), multiplied with the PTX layouts of mma m16n8k16 (A (g, 2t..),
# (g + 8, 2t..), (g, 2t + 8..), (g + 8, 2t + 8..); B (2t.., g), (2t + 8.., g); C (g, 2t..), (g + 8, 2t..);
# g = lane / 4, t = lane % 4), and frag_index's inverse map, against the direct sums, at head sizes 128 and
# 256 (two parts of 128 dims: the scores add both parts, P V's tiles 8..15 hold part 1). Mirror of the
# header's index math: keep it in step when either changes.   python3 tools/emulate/decode_mma_fragments.py
import numpy as np

rng = np.random.default_rng(7)
G, KEYS, PART = 4, 16, 128


def byte_perm(x, y, s):
    b = [(x >> (8 * i)) & 255 for i in range(4)] + [(y >> (8 * i)) & 255 for i in range(4)]
    return sum(b[(s >> (4 * i)) & 7] << (8 * i) for i in range(4))


def f16_pair(w):  # a 32-bit register as two f16 (low half first)
    return np.array([w & 0xFFFF, w >> 16], dtype=np.uint16).view(np.float16).astype(np.float64)


def s8x4_f16(w):  # decode_mma.cuh s8x4_f16: (b0, b1), (b2, b3) as f16 pairs
    u = w ^ 0x80808080
    lo = f16_pair(byte_perm(u, 0x64646464, 0x4140)) - 1152
    hi = f16_pair(byte_perm(u, 0x64646464, 0x4342)) - 1152
    return lo, hi


def mma(a, b):  # a[lane] = 4 registers of 2 values, b[lane] = 2 registers of 2: C[lane] = 4 values
    A = np.zeros((16, 16)); B = np.zeros((16, 8))
    for l in range(32):
        g, t = l // 4, l % 4
        A[g, 2 * t:2 * t + 2], A[g + 8, 2 * t:2 * t + 2] = a[l][0], a[l][1]
        A[g, 2 * t + 8:2 * t + 10], A[g + 8, 2 * t + 8:2 * t + 10] = a[l][2], a[l][3]
        B[2 * t:2 * t + 2, g], B[2 * t + 8:2 * t + 10, g] = b[l][0], b[l][1]
    C = A @ B
    return [np.array([C[l // 4, 2 * (l % 4)], C[l // 4, 2 * (l % 4) + 1], C[l // 4 + 8, 2 * (l % 4)],
                      C[l // 4 + 8, 2 * (l % 4) + 1]]) for l in range(32)]


def words16(row):  # f16 values -> list of 32-bit words (pairs)
    h = np.asarray(row, dtype=np.float16).view(np.uint16).astype(np.uint64)
    return [int(h[2 * i] | (h[2 * i + 1] << 16)) for i in range(len(h) // 2)]


def words8(row):  # int8 values -> 32-bit words
    b = (np.asarray(row, dtype=np.int64) & 255).astype(np.uint64)
    return [int(b[4 * i] | b[4 * i + 1] << 8 | b[4 * i + 2] << 16 | b[4 * i + 3] << 24) for i in range(len(b) // 4)]


def frag_index(h, d, q8):
    part, d = d // PART, d % PART
    if q8:
        T, r, half = 2 * (d // 32) + (d % 4) // 2, (d % 32) // 4, d % 2
    else:
        T, r, half = (d % 16) // 2, d // 16, d % 2
    T += 8 * part
    return (T * 4 + 2 * half + h % 2) * 32 + 4 * r + h // 2


def check(q8, D):
    parts = D // PART
    Q = rng.normal(size=(8, D)) * 0.1; Q[G:] = 0  # heads past G: zero columns
    if q8:
        kq = rng.integers(-127, 128, size=(KEYS, D)); kd = rng.uniform(0.01, 0.05, size=(KEYS, D // 32))
        vq = rng.integers(-127, 128, size=(KEYS, D)); vd = rng.uniform(0.01, 0.05, size=(KEYS, D // 32))
        K = kq * np.repeat(kd, 32, axis=1); V = vq * np.repeat(vd, 32, axis=1)
    else:
        K = rng.normal(size=(KEYS, D)).astype(np.float16).astype(np.float64)
        V = rng.normal(size=(KEYS, D)).astype(np.float16).astype(np.float64)
    # Scores: query_frag + KeyFrag::scores (exact sums here: hi + lo stands for the f32 x)
    s = [np.zeros(4) for _ in range(32)]
    for b in range(4 * parts):  # block b of the head: part b // 4, block b % 4 of it
        cb = [np.zeros(4) for _ in range(32)]
        for h in range(2):
            a, bb = [], []
            for l in range(32):
                r, c = l // 4, l % 4
                e = 32 * b + 8 * c + 4 * h
                bb.append((Q[r, e:e + 2], Q[r, e + 2:e + 4]))
                if q8:
                    w0 = words8(kq[r, 32 * b + 8 * c:32 * b + 8 * c + 8])[h]
                    w1 = words8(kq[r + 8, 32 * b + 8 * c:32 * b + 8 * c + 8])[h]
                    (a0, a2), (a1, a3) = s8x4_f16(w0), s8x4_f16(w1)
                    a.append((a0, a1, a2, a3))
                else:
                    k0 = words16(K[r, 32 * b + 8 * c:32 * b + 8 * c + 8]); k1 = words16(K[r + 8, 32 * b + 8 * c:32 * b + 8 * c + 8])
                    a.append(tuple(f16_pair(w) for w in (k0[2 * h], k1[2 * h], k0[2 * h + 1], k1[2 * h + 1])))
            out = mma(a, bb)
            for l in range(32):
                cb[l] += out[l]
        for l in range(32):
            r = l // 4
            sc = np.array([kd[r, b], kd[r, b], kd[r + 8, b], kd[r + 8, b]]) if q8 else np.ones(4)
            s[l] += sc * cb[l]
    S = K @ Q.T  # [key][head]
    err_s = max(abs(s[l][u] - S[l // 4 + 8 * (u // 2), 2 * (l % 4) + u % 2]) for l in range(32) for u in range(4))
    # P V: ValueFrag::pv, P[head][key] (heads past G zero), the slot layout, frag_index
    P = rng.uniform(0, 1, size=(8, KEYS)); P[G:] = 0
    o = [[np.zeros(4) for _ in range(8 * parts)] for _ in range(32)]
    keys = lambda c: [2 * c, 2 * c + 1, 2 * c + 8, 2 * c + 9]  # value_key
    if q8:
        for b in range(4 * parts):  # ValueFrag<KvQ8>::pv of part b // 4: tiles 8 (b // 4) + 2 (b % 4) + e
            a, bb = {0: [], 1: []}, []
            for l in range(32):
                r, c = l // 4, l % 4
                ks = keys(c)
                x = [vd[k, b] * P[r, k] for k in ks]
                bb.append((np.array(x[0:2]), np.array(x[2:4])))
                v = [words8(vq[k, 32 * b + 4 * r:32 * b + 4 * r + 4])[0] for k in ks]
                t01, t23 = byte_perm(v[0], v[1], 0x5140), byte_perm(v[0], v[1], 0x7362)
                u01, u23 = byte_perm(v[2], v[3], 0x5140), byte_perm(v[2], v[3], 0x7362)
                for e in range(2):
                    a0, a1 = s8x4_f16(t23 if e else t01); a2, a3 = s8x4_f16(u23 if e else u01)
                    a[e].append((a0, a1, a2, a3))
            for e in range(2):
                out = mma(a[e], bb)
                for l in range(32):
                    o[l][2 * b + e] += out[l]
    else:
        for T in range(8 * parts):  # part T // 8: its dims 128 part + 16 r .. + 15 per lane
            a, bb = [], []
            off = PART * (T // 8)
            for l in range(32):
                r, c = l // 4, l % 4
                ks = keys(c)
                bb.append((P[r, ks[0:2]], P[r, ks[2:4]]))
                x = [words16(V[k, off + 16 * r:off + 16 * r + 16])[T % 8] for k in ks]
                a.append(tuple(f16_pair(w) for w in (byte_perm(x[0], x[1], 0x5410), byte_perm(x[0], x[1], 0x7632),
                                                     byte_perm(x[2], x[3], 0x5410), byte_perm(x[2], x[3], 0x7632))))
            out = mma(a, bb)
            for l in range(32):
                o[l][T] += out[l]
    slot = np.zeros(8 * parts * 4 * 32)
    for l in range(32):
        for T in range(8 * parts):
            for e in range(4):
                slot[(T * 4 + e) * 32 + l] = o[l][T][e]
    O = P @ V  # [head][dim]
    err_o = max(abs(slot[frag_index(h, d, q8)] - O[h, d]) for h in range(8) for d in range(D))
    idx = sorted(frag_index(h, d, q8) for h in range(8) for d in range(D))
    assert idx == list(range(8 * D)), "frag_index is not a bijection"
    return err_s, err_o


ok = True
for D in (128, 256):
    for q8 in (False, True):
        es, eo = check(q8, D)
        good = es < 1e-9 and eo < 1e-9
        ok &= good
        print(f"D = {D}, {'q8_0' if q8 else 'f16 '}: scores max err {es:.2e}, P V max err {eo:.2e} {'ok' if good else 'FAIL'}")
raise SystemExit(0 if ok else 1)
