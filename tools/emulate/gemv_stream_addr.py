# Host emulation of cuda/gemv/gemv_stream.cu's addressing (no GPU needed): every byte a lane reads from its
# stage maps, through the bulk copies of issue(), to the global byte the warp-per-row kernel
# (gemv_q8.cu) reads for the same row, block, lane and field; copies 16-byte aligned, inside the
# ring, not overlapping, and summing to the announced bytes. Mirror of the kernel's index math: keep
# it in step when either changes.  python3 tools/emulate/gemv_stream_addr.py
import itertools, sys
FMT = {  # name: (block_elems, chunk, lanes, planes, align)
  'Q4_K': (256, 16, 4, [144], 1), 'Q5_K': (256, 16, 4, [176], 1),
  'Q6_K': (256, 16, 8, [128, 64, 16, 2], 8),
  'BF16': (256, 4, 32, [512], 1)}  # F16 / BF16 rows (HalfStream): the same bytes, 2 a weight
W = 8  # warps per CTA = rows per group
def reads(fmt, kch, bb, sub, nb_plane_off):
    """(plane, offset within the plane's part of the piece (relative to bb's block start), length) the stream dot reads,
    and the same as (plane, offset within the block, length) for the old kernel's global read."""
    if fmt in ('Q4_K', 'Q5_K'):
        c = sub; qs = 48 if fmt == 'Q5_K' else 16; out = [(0, 0, 16), (0, qs + 32 * c, 32)]
        if fmt == 'Q5_K': out.append((0, 16, 32))
        return out
    if fmt == 'BF16':
        return [(0, 16 * sub, 16)]  # HalfStream::dot: the lane's 8 weights of the 256-weight block
    if fmt == 'Q6_K':
        n, l0 = sub // 4, 8 * (sub % 4)
        return [(0, 64 * n + l0, 8), (0, 64 * n + 32 + l0, 8), (1, 32 * n + l0, 8), (2, 8 * n, 8), (3, 0, 2)]
def run(fmt, seg_rows, cols, kmats, sms=132, ctas_per_sm=2, stages=3):
    be, chunk_full, lanes, planes, align = FMT[fmt]
    blocks = cols // be
    if cols % be or blocks % align: return 'fallback'
    kch = chunk_full // kmats
    piece = kch * sum(planes)
    plane_off = [kch * sum(planes[:p]) for p in range(len(planes))]
    stage = kmats * W * piece
    groups_per_seg = [(r + W - 1) // W for r in seg_rows]
    group_end = list(itertools.accumulate(groups_per_seg)); groups = group_end[-1]
    grid = min(groups, ctas_per_sm * sms)
    chunks = (blocks + kch - 1) // kch
    checked = 0
    for cta in range(grid):
        g0, g1 = cta * groups // grid, (cta + 1) * groups // grid
        items = (g1 - g0) * chunks
        def item(i):
            g = g0 + i // chunks
            s = sum(g >= e for e in group_end[:len(seg_rows) - 1])
            first = 0 if s == 0 else group_end[s - 1]
            rows = seg_rows[s]; r0 = (g - first) * W; nr = min(W, rows - r0)
            kc = i % chunks; nb = min(kch, blocks - kc * kch)
            return s, nr, kc, nb, r0, rows
        ring = {}  # slot -> {ring byte offset: (seg, m, plane, global byte within the plane)}
        def issue(i):
            s, nr, kc, nb, r0, rows = item(i); slot = i % stages
            expect = kmats * nr * sum(nb * pb for pb in planes)
            m_ = {}; total = 0
            for k in range(kmats * nr * len(planes)):
                p = k % len(planes); r = (k // len(planes)) % nr; m = k // (len(planes) * nr)
                gb = (r0 + r) * blocks + kc * kch
                dst = slot * stage + (m * W + r) * piece + plane_off[p]
                src = gb * planes[p]; size = nb * planes[p]
                n_blocks = rows * blocks; plane_base = sum(n_blocks * planes[q] for q in range(p))
                assert (plane_base + src) % 16 == 0 and dst % 16 == 0 and size % 16 == 0, (fmt, 'align', plane_base + src, dst, size)
                assert dst + size <= stages * stage
                for b in range(size):
                    assert dst + b not in m_, 'overlap'
                    m_[dst + b] = (s, m, p, src + b)
                total += size
            assert total == expect, (total, expect)
            ring[slot] = m_
        for i in range(min(items, stages)): issue(i)
        for i in range(items):
            s, nr, kc, nb, r0, rows = item(i); slot = i % stages
            for w in range(min(nr, W)):
                row = r0 + w
                bps = 32 // lanes
                for u in range((kch + bps - 1) // bps):
                    for lane in range(32):
                        bb = lane // lanes + bps * u; sub = lane % lanes
                        if bb >= nb: continue
                        b = kc * kch + bb; gb = row * blocks + b
                        for m in range(kmats):
                            piece_base = slot * stage + (m * W + w) * piece
                            for (p, off, ln) in reads(fmt, kch, bb, sub, plane_off):
                                for t in range(ln):
                                    got = ring[slot][piece_base + plane_off[p] + bb * planes[p] + off + t]
                                    want = (s, m, p, gb * planes[p] + off + t)
                                    assert got == want, (fmt, seg_rows, cols, kmats, cta, i, w, lane, p, got, want)
                                    checked += 1
            if i + stages < items: issue(i + stages)
    return checked
shapes = [([1], 256), ([33], 2304), ([33], 6144), ([4096], 4096), ([37], 4096), ([1000], 4096), ([64, 17, 16], 512),
          ([4096, 1024, 1024], 4096), ([300], 12288)]
for fmt in FMT:
    for rows, cols in shapes:
        for kmats in ((1, 2) if len(rows) == 1 and fmt != 'BF16' else (1,)):
            print(fmt, rows, cols, 'mats', kmats, run(fmt, rows, cols, kmats, stages=3))
print('ok')
