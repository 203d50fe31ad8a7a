# Host emulation of cuda/gemm/gemm_q8.cu's gemm_q8s_grouped_kernel (no GPU needed): one CTA tile and
# one superblock, Q4_K and Q6_K, every lane's fragments built from the kernel's shared layouts and index math
# (a_off's swizzle, ldmatrix's row addresses, the staged Q4_K rows, sc_tab / min_tab / d_tab, the
# (d, d sum q) pairs), multiplied with the PTX fragment layouts of mma m16n8k32 s8 (as the
# per-sub-block kernel, checked on the H200) and m16n8k8 tf32 (A (g, t), (g + 8, t), (g, t + 4),
# (g + 8, t + 4); B (t, g), (t + 4, g); g = lane / 4, t = lane % 4), against the direct sum over
# dequantized weights. Mirror of the kernel's index math: keep it in step when either changes.
#   python3 tools/emulate/q8s_fragments.py      (numpy; seconds)
import numpy as np
rng = np.random.default_rng(1)
BM, BN, K = 64, 128, 256
# Activations: int8 q [64][256], one d per row (per256), y = d * sum q per 32
q = rng.integers(-127, 128, size=(BM, K)).astype(np.int64)
d_a = rng.uniform(0.01, 0.1, size=BM)
y = d_a[:, None] * q.reshape(BM, 8, 32).sum(axis=2)
# Q4_K blocks for 128 rows: d, dmin, sc[8], m[8] (6-bit), qs nibbles
d_w = rng.uniform(0.001, 0.01, size=BN); dmin_w = rng.uniform(0.001, 0.01, size=BN)
sc = rng.integers(0, 64, size=(BN, 8)); mn = rng.integers(0, 64, size=(BN, 8))
wq = rng.integers(0, 16, size=(BN, K))  # element k of row n: sub-block k // 32
# qs bytes: pair p = sb // 2 holds sub-blocks 2p (low nibble), 2p+1 (high); byte j of the pair = element j
qs = np.zeros((BN, 128), dtype=np.int64)
for p in range(4):
    qs[:, 32 * p:32 * p + 32] = wq[:, 64 * p:64 * p + 32] | (wq[:, 64 * p + 32:64 * p + 64] << 4)
w = d_w[:, None] * np.repeat(sc, 32, axis=1) * wq - dmin_w[:, None] * np.repeat(mn, 32, axis=1)
ref = (d_a[:, None] * q) @ w.T  # [64][128]

# Shared A stage: byte (row, k) at a_off(row, k // 16) + k % 16
def a_off(row, chunk): return row * 256 + ((chunk ^ (row & 7)) << 4)
A = np.zeros(64 * 256, dtype=np.int64)
for r in range(64):
    for k in range(256):
        A[a_off(r, k // 16) + k % 16] = q[r, k]
# B staged rows: byte 16 + j of row n = qs[n][j]
def bbyte(n, off): return qs[n, off - 16]
def word(vals): return vals  # a 4-byte word as a list of 4 ints (little endian order)

acc = np.zeros((BM, BN))
for warp in range(8):
    wm, wn = warp // 4, warp % 4
    tacc = np.zeros((2, 4, 32, 4), dtype=np.int64)
    for sbk in range(8):
        # ldmatrix_x4: lane l gives the row address (row wm*32+16i+l%16, chunk 2sbk + l//16) for matrix l//8
        af = np.zeros((2, 32, 4, 4), dtype=np.int64)  # [i][lane][reg][byte]
        for i in range(2):
            addrs = [a_off(wm * 32 + 16 * i + l % 16, 2 * sbk + l // 16) for l in range(32)]
            for mat in range(4):
                for lane in range(32):
                    row_addr = addrs[8 * mat + lane // 4]
                    for b in range(4):
                        af[i, lane, mat, b] = A[row_addr + 4 * (lane % 4) + b]
        for jj in range(4):
            n = wn * 32 + 8 * jj
            for i in range(2):
                for lane in range(32):
                    g, t = lane // 4, lane % 4
                    # B frag of lane: row n + g, bytes 16 + 32 (sbk//2) + 4t .. and +16
                    off = 16 + 32 * (sbk // 2) + 4 * t
                    b0 = [(bbyte(n + g, off + b) >> (4 * (sbk % 2))) & 15 for b in range(4)]
                    b1 = [(bbyte(n + g, off + 16 + b) >> (4 * (sbk % 2))) & 15 for b in range(4)]
                    c0, c1 = sc[n + 2 * t, sbk], sc[n + 2 * t + 1, sbk]
                    # mma m16n8k32: C (row, col) = sum_k A[row][k] B[k][col]; find lanes holding the pieces
                    for e in range(4):
                        row = g + 8 * (e // 2); col = 2 * t + e % 2
                        s = 0
                        for kk in range(32):
                            # A[row][kk]: reg (row>=8) + 2*(kk>=16), lane 4*(row%8) + (kk%16)//4, byte kk%4
                            ar = (1 if row >= 8 else 0) + 2 * (1 if kk >= 16 else 0)
                            al = 4 * (row % 8) + (kk % 16) // 4
                            av = af[i, al, ar, kk % 4]
                            # B[kk][col]: lane 4*col + (kk%16)//4, reg kk>=16, byte kk%4
                            bl = 4 * col + (kk % 16) // 4
                            boff = 16 + 32 * (sbk // 2) + 4 * (bl % 4) + (16 if kk >= 16 else 0) + kk % 4
                            bv = (bbyte(n + bl // 4, boff) >> (4 * (sbk % 2))) & 15
                            s += av * bv
                        tacc[i, jj, lane, e] += (c0 if e % 2 == 0 else c1) * s
    for i in range(2):
        for jj in range(4):
            n = wn * 32 + 8 * jj
            for lane in range(32):
                g, t = lane // 4, lane % 4
                r0 = wm * 32 + 16 * i + g
                for e in range(4):
                    row = r0 + 8 * (e // 2); col = n + 2 * t + e % 2
                    acc[row, col] += d_a[row] * d_w[col] * tacc[i, jj, lane, e]
            # min term: mma m16n8k8: C[row][col] += sum_k A[row][k] B[k][col], A = -y[rows][8], B = (dmin m)[col][8]
            for lane in range(32):
                g, t = lane // 4, lane % 4
                for e in range(4):
                    row_l = g + 8 * (e // 2); col_l = 2 * t + e % 2
                    s = 0.0
                    for k in range(8):
                        # A[row_l][k] held by lane 4*(row_l%8) + k%4, reg (row_l>=8) + 2*(k>=4): value -y[r][ (lane%4) + 4*(reg>=2) ]
                        al = 4 * (row_l % 8) + k % 4
                        reg = (1 if row_l >= 8 else 0) + (2 if k >= 4 else 0)
                        r_src = wm * 32 + 16 * i + al // 4 + (8 if reg % 2 else 0)
                        k_src = al % 4 + (4 if reg >= 2 else 0)
                        av = -y[r_src, k_src]
                        # B[k][col_l] held by lane 4*col_l + k%4, reg k>=4: min_tab[(n + lane/4)*8 + lane%4 (+4)]
                        bl = 4 * col_l + k % 4
                        bv = dmin_w[n + bl // 4] * mn[n + bl // 4, bl % 4 + (4 if k >= 4 else 0)]
                        s += av * bv
                    acc[wm * 32 + 16 * i + row_l, n + col_l] += s
err = np.abs(acc - ref).max() / np.abs(ref).max()
print("Q4_K max relative error", err)
assert err < 1e-9

# ---- Q6_K (Q8sQ6K): planes staged as ql[128] | qh[64] | scales[16], two m16n8k16 MMAs a sub-block ----
rng = np.random.default_rng(2)
q = rng.integers(-127, 128, size=(BM, K)).astype(np.int64)
d_a = rng.uniform(0.01, 0.1, size=BM)
# Q6_K rows: 6-bit quants w6[n][k], int8 scales sc[n][16], d[n]
w6 = rng.integers(0, 64, size=(BN, K)); sc = rng.integers(-128, 128, size=(BN, 16)); d_w = rng.uniform(0.001, 0.01, size=BN)
# ggml Q6_K packing per half h (128 elements): for l < 32: e0 = l, e1 = l + 32, e2 = l + 64, e3 = l + 96
ql = np.zeros((BN, 128), dtype=np.int64); qh = np.zeros((BN, 64), dtype=np.int64)
for h in range(2):
    for l in range(32):
        e = [128 * h + l + 32 * u for u in range(4)]
        v = [w6[:, x] for x in e]
        ql[:, 64 * h + l] = (v[0] & 15) | ((v[2] & 15) << 4)
        ql[:, 64 * h + l + 32] = (v[1] & 15) | ((v[3] & 15) << 4)
        qh[:, 32 * h + l] = (v[0] >> 4) | ((v[1] >> 4) << 2) | ((v[2] >> 4) << 4) | ((v[3] >> 4) << 6)
w = d_w[:, None] * np.repeat(sc, 16, axis=1) * (w6 - 32)
ref = (d_a[:, None] * q) @ w.T
staged = np.zeros((BN, 240), dtype=np.int64)
staged[:, 0:128] = ql; staged[:, 128:192] = qh; staged[:, 192:208] = sc & 255
A = np.zeros(64 * 256, dtype=np.int64)
for r in range(64):
    for k in range(256): A[a_off(r, k // 16) + k % 16] = q[r, k]
def s8(x): return x - 256 if x >= 128 else x
acc = np.zeros((BM, BN))
for warp in range(8):
    wm, wn = warp // 4, warp % 4
    tacc = np.zeros((2, 4, 32, 4), dtype=np.int64)
    for sbk in range(8):
        af = np.zeros((2, 32, 4, 4), dtype=np.int64)
        for i in range(2):
            addrs = [a_off(wm * 32 + 16 * i + l % 16, 2 * sbk + l // 16) for l in range(32)]
            for mat in range(4):
                for lane in range(32):
                    for b in range(4): af[i, lane, mat, b] = A[addrs[8 * mat + lane // 4] + 4 * (lane % 4) + b]
        h, u = sbk // 4, sbk % 4
        for jj in range(4):
            n = wn * 32 + 8 * jj
            # every lane's b[k] (4 signed bytes) from the staged row n + lane / 4, as the kernel builds them
            bfr = np.zeros((32, 2, 4), dtype=np.int64)
            for lane in range(32):
                row = staged[n + lane // 4]
                for k in range(2):
                    for b in range(4):
                        lo = (row[64 * h + 32 * (u % 2) + 4 * (lane % 4) + 16 * k + b] >> (4 * (u // 2))) & 15
                        hi = ((row[128 + 32 * h + 4 * (lane % 4) + 16 * k + b] >> (2 * u)) & 3) << 4
                        bfr[lane, k, b] = s8(((lo | hi) - 32) & 255)
            for i in range(2):
                for lane in range(32):
                    g, t = lane // 4, lane % 4
                    for k in range(2):
                        c0 = s8(int(staged[n + 2 * t, 192 + 2 * sbk + k])); c1 = s8(int(staged[n + 2 * t + 1, 192 + 2 * sbk + k]))
                        for e in range(4):
                            row = g + 8 * (e // 2); col = 2 * t + e % 2
                            sacc = 0
                            for kk in range(16):  # m16n8k16: A {af[2k], af[2k+1]}: reg (row >= 8), lane 4 (row % 8) + kk // 4
                                av = af[i, 4 * (row % 8) + kk // 4, 2 * k + (1 if row >= 8 else 0), kk % 4]
                                bv = bfr[4 * col + kk // 4, k, kk % 4]
                                sacc += av * bv
                            tacc[i, jj, lane, e] += (c0 if e % 2 == 0 else c1) * sacc
    for i in range(2):
        for jj in range(4):
            n = wn * 32 + 8 * jj
            for lane in range(32):
                g, t = lane // 4, lane % 4
                for e in range(4):
                    row = wm * 32 + 16 * i + g + 8 * (e // 2); col = n + 2 * t + e % 2
                    acc[row, col] += d_a[row] * d_w[col] * tacc[i, jj, lane, e]
err = np.abs(acc - ref).max() / np.abs(ref).max()
print("Q6_K max relative error", err); assert err < 1e-9
