//! Strided copies between decoded chunks and numpy memory: the one place (with the buffer
//! handling in lib.rs) where raw pointers are used. Every caller checks, in safe code,
//! that each address a copy touches lies inside its buffer (`Region::check`,
//! `OutArray::check`) before calling in.

/// One dimension of a selection: `count` indices `start, start + step, ...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim {
    pub start: usize,
    pub step: usize,
    pub count: usize,
}

impl Dim {
    /// From Python's `(start, stop, step)`; None if the step is not positive or an index
    /// is negative.
    pub fn from_triple(start: i64, stop: i64, step: i64) -> Option<Dim> {
        if step < 1 || start < 0 || stop < 0 {
            return None;
        }
        let count = if stop > start { ((stop - start) + step - 1) / step } else { 0 };
        Some(Dim { start: start as usize, step: step as usize, count: count as usize })
    }

    /// The last index, if any.
    pub fn last(&self) -> Option<usize> {
        if self.count == 0 {
            None
        } else {
            self.step.checked_mul(self.count - 1).and_then(|d| d.checked_add(self.start))
        }
    }

    pub fn within(&self, len: usize) -> bool {
        match self.last() {
            None => true,
            Some(last) => last < len && self.start < len,
        }
    }
}

/// A writable numpy array's memory: base pointer, shape and byte strides.
#[derive(Debug, Clone)]
pub struct OutArray {
    pub ptr: *mut u8,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub itemsize: usize,
}

// SAFETY: the array is kept alive by the caller for the whole call, and the tasks of one
// call write disjoint regions of it (a documented requirement of the API).
unsafe impl Send for OutArray {}
unsafe impl Sync for OutArray {}

impl OutArray {
    /// True when `sel` (one Dim per axis) lies inside the array.
    pub fn check(&self, sel: &[Dim]) -> bool {
        sel.len() == self.shape.len() && sel.iter().zip(&self.shape).all(|(d, &n)| d.within(n))
    }

    /// Copy the item at byte `offset` of `src` to element `i` of a 1-d array, swapping
    /// units of `swap` bytes when `swap > 1`.
    pub fn put_item(&self, i: usize, src: &[u8], offset: usize, swap: usize) -> Result<(), String> {
        let n = self.itemsize;
        if self.shape.len() != 1 || i >= self.shape[0] {
            return Err("point outside the output".into());
        }
        let Some(item) = offset.checked_add(n).and_then(|end| src.get(offset..end)) else {
            return Err("point outside the decoded chunk".into());
        };
        // SAFETY: i is below the axis' length, so the item lies inside the array.
        unsafe {
            let to = self.ptr.offset(i as isize * self.strides[0]);
            if swap > 1 {
                for u in (0..n).step_by(swap) {
                    for b in 0..swap {
                        *to.add(u + b) = item[u + swap - 1 - b];
                    }
                }
            } else {
                std::ptr::copy_nonoverlapping(item.as_ptr(), to, n);
            }
        }
        Ok(())
    }

    /// Byte offset of the first selected element and byte steps per axis.
    fn layout(&self, sel: &[Dim]) -> (isize, Vec<isize>) {
        let mut base = 0isize;
        let mut steps = Vec::with_capacity(sel.len());
        for (d, &s) in sel.iter().zip(&self.strides) {
            base += d.start as isize * s;
            steps.push(d.step as isize * s);
        }
        (base, steps)
    }
}

/// Source region of a contiguous decoded buffer (strides per axis, all non-negative).
pub fn source_layout(strides: &[usize], sel: &[Dim]) -> (usize, Vec<isize>) {
    let mut base = 0usize;
    let mut steps = Vec::with_capacity(sel.len());
    for (d, &s) in sel.iter().zip(strides) {
        base += d.start * s;
        steps.push((d.step * s) as isize);
    }
    (base, steps)
}

/// Highest byte (exclusive) that a region reads: base + sum((count - 1) * step) + itemsize.
fn extent(base: usize, steps: &[isize], counts: &[usize], itemsize: usize) -> Option<usize> {
    let mut end = base;
    for (&s, &c) in steps.iter().zip(counts) {
        if c == 0 {
            return Some(0);
        }
        end = end.checked_add((s as usize).checked_mul(c - 1)?)?;
    }
    end.checked_add(itemsize)
}

/// Copy the selection `sel` of a decoded chunk `src` (C-contiguous bytes in the chain's
/// stored order, `strides` per chunk axis) into the selection `out_sel` of `out`, byte
/// swapping units of `swap` bytes when `swap > 1`. Both selections must have been
/// checked: `sel` inside the chunk's shape, `out_sel` inside `out` (`OutArray::check`).
pub fn scatter(
    src: &[u8],
    strides: &[usize],
    sel: &[Dim],
    out: &OutArray,
    out_sel: &[Dim],
    swap: usize,
) -> Result<(), String> {
    let counts: Vec<usize> = sel.iter().map(|d| d.count).collect();
    if counts.contains(&0) {
        return Ok(());
    }
    let (sbase, ssteps) = source_layout(strides, sel);
    match extent(sbase, &ssteps, &counts, out.itemsize) {
        Some(end) if end <= src.len() => {}
        _ => return Err("selection outside the decoded chunk".into()),
    }
    if !out.check(out_sel) || out_sel.iter().map(|d| d.count).ne(counts.iter().copied()) {
        return Err("output selection outside the output array".into());
    }
    let (dbase, dsteps) = out.layout(out_sel);
    // SAFETY: every source address is inside `src` (extent above) and every destination
    // address inside `out` (each selected index is below its axis' length).
    unsafe {
        copy_nd(
            src.as_ptr().add(sbase),
            &ssteps,
            out.ptr.offset(dbase),
            &dsteps,
            &counts,
            out.itemsize,
            swap,
        );
    }
    Ok(())
}

/// Fill the selection `out_sel` of `out` with the item `fill`.
pub fn fill(fill: &[u8], out: &OutArray, out_sel: &[Dim]) -> Result<(), String> {
    if fill.len() != out.itemsize || !out.check(out_sel) {
        return Err("output selection outside the output array".into());
    }
    let counts: Vec<usize> = out_sel.iter().map(|d| d.count).collect();
    if counts.contains(&0) {
        return Ok(());
    }
    let (dbase, dsteps) = out.layout(out_sel);
    let zeros = vec![0isize; counts.len()];
    // SAFETY: the source is `fill` itself at every step (steps of 0, `itemsize` bytes);
    // destinations are inside `out` as in `scatter`.
    unsafe {
        copy_nd(fill.as_ptr(), &zeros, out.ptr.offset(dbase), &dsteps, &counts, out.itemsize, 0);
    }
    Ok(())
}

/// A read-only numpy array's memory (a chunk given to `encode_batch`).
#[derive(Debug, Clone)]
pub struct InArray {
    pub ptr: *const u8,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub itemsize: usize,
}

// SAFETY: the arrays are kept alive (and only read) for the whole call.
unsafe impl Send for InArray {}
unsafe impl Sync for InArray {}

/// Gather the box of `shape` starting at `origin` of `arr` into `out` (exactly its size, contiguous)
/// in encoded order (encoded axis k is axis `perm[k]`), swapping units of `swap` bytes.
pub fn gather_into(
    arr: &InArray,
    origin: &[usize],
    shape: &[usize],
    perm: &[usize],
    swap: usize,
    out: &mut [u8],
) -> Result<(), String> {
    let ndim = arr.shape.len();
    if origin.len() != ndim || shape.len() != ndim || perm.len() != ndim {
        return Err("dimension mismatch".into());
    }
    for k in 0..ndim {
        match origin[k].checked_add(shape[k]) {
            Some(end) if end <= arr.shape[k] => {}
            _ => return Err("region outside the array".into()),
        }
    }
    let count: usize = shape.iter().product();
    if out.len() != count * arr.itemsize {
        return Err("output size differs from the box".into());
    }
    if count == 0 {
        return Ok(());
    }
    let base: isize = origin.iter().zip(&arr.strides).map(|(&o, &s)| o as isize * s).sum();
    let counts: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let ssteps: Vec<isize> = perm.iter().map(|&p| arr.strides[p]).collect();
    let mut dsteps = vec![0isize; ndim];
    let mut acc = arr.itemsize as isize;
    for k in (0..ndim).rev() {
        dsteps[k] = acc;
        acc *= counts[k] as isize;
    }
    // SAFETY: source addresses are elements of the box, inside the array (checked above);
    // destinations cover exactly `out`.
    unsafe {
        copy_nd(arr.ptr.offset(base), &ssteps, out.as_mut_ptr(), &dsteps, &counts, arr.itemsize, swap);
    }
    Ok(())
}

/// # Safety
/// Every address `src + sum(i_k * ssteps[k])` and `dst + sum(i_k * dsteps[k])` for
/// `i_k < counts[k]`, plus `itemsize` bytes, must be valid to read / write.
unsafe fn copy_nd(
    src: *const u8,
    ssteps: &[isize],
    dst: *mut u8,
    dsteps: &[isize],
    counts: &[usize],
    itemsize: usize,
    swap: usize,
) {
    // Axes of length 1 move nothing (their steps are any); then merge axes contiguous in
    // both buffers, innermost first, so the inner loop runs as long as possible.
    let keep: Vec<usize> = (0..counts.len()).filter(|&k| counts[k] != 1).collect();
    let mut c: Vec<usize> = keep.iter().map(|&k| counts[k]).collect();
    let mut s: Vec<isize> = keep.iter().map(|&k| ssteps[k]).collect();
    let mut d: Vec<isize> = keep.iter().map(|&k| dsteps[k]).collect();
    let mut k = c.len();
    while k >= 2 {
        let i = k - 1;
        if s[i - 1] == s[i] * c[i] as isize && d[i - 1] == d[i] * c[i] as isize {
            c[i - 1] *= c[i];
            s[i - 1] = s[i];
            d[i - 1] = d[i];
            c.remove(i);
            s.remove(i);
            d.remove(i);
        }
        k -= 1;
    }
    if c.is_empty() {
        c.push(1);
        s.push(0);
        d.push(0);
    }
    copy_rec(src, &s, dst, &d, &c, itemsize, swap);
}

unsafe fn copy_rec(
    src: *const u8,
    s: &[isize],
    dst: *mut u8,
    d: &[isize],
    c: &[usize],
    itemsize: usize,
    swap: usize,
) {
    if c.len() == 1 {
        copy_line(src, s[0], dst, d[0], c[0], itemsize, swap);
        return;
    }
    if c.len() == 2 && swap <= 1 && s[1] == itemsize as isize && d[1] == itemsize as isize {
        let len = c[1] * itemsize;
        if (16..=64).contains(&len) {
            short_rows(src, s[0], dst, d[0], c[0], len);
            return;
        }
    }
    for i in 0..c[0] {
        copy_rec(
            src.offset(i as isize * s[0]),
            &s[1..],
            dst.offset(i as isize * d[0]),
            &d[1..],
            &c[1..],
            itemsize,
            swap,
        );
    }
}

#[inline(always)]
unsafe fn copy_line(
    src: *const u8,
    s: isize,
    dst: *mut u8,
    d: isize,
    n: usize,
    itemsize: usize,
    swap: usize,
) {
    if swap > 1 {
        for i in 0..n as isize {
            let from = src.offset(i * s);
            let to = dst.offset(i * d);
            for u in (0..itemsize).step_by(swap) {
                for b in 0..swap {
                    *to.add(u + b) = *from.add(u + swap - 1 - b);
                }
            }
        }
        return;
    }
    if s == itemsize as isize && d == itemsize as isize {
        std::ptr::copy_nonoverlapping(src, dst, n * itemsize);
        return;
    }
    match itemsize {
        1 => line::<1>(src, s, dst, d, n),
        2 => line::<2>(src, s, dst, d, n),
        4 => line::<4>(src, s, dst, d, n),
        8 => line::<8>(src, s, dst, d, n),
        16 => line::<16>(src, s, dst, d, n),
        _ => {
            for i in 0..n as isize {
                std::ptr::copy_nonoverlapping(src.offset(i * s), dst.offset(i * d), itemsize);
            }
        }
    }
}

/// Rows of 16 to 64 contiguous bytes: each row moved with two overlapping unaligned
/// copies of half-rows or less, no call per row.
unsafe fn short_rows(src: *const u8, s: isize, dst: *mut u8, d: isize, rows: usize, len: usize) {
    if len >= 32 {
        overlapping_rows::<32>(src, s, dst, d, rows, len);
    } else {
        overlapping_rows::<16>(src, s, dst, d, rows, len);
    }
}

/// Rows of `len` bytes, `W <= len <= 2 * W`: the first and the last `W` bytes of each.
#[inline(always)]
unsafe fn overlapping_rows<const W: usize>(
    src: *const u8,
    s: isize,
    dst: *mut u8,
    d: isize,
    rows: usize,
    len: usize,
) {
    let tail = len - W;
    for i in 0..rows as isize {
        let from = src.offset(i * s);
        let to = dst.offset(i * d);
        let head = std::ptr::read_unaligned(from as *const [u8; W]);
        let last = std::ptr::read_unaligned(from.add(tail) as *const [u8; W]);
        std::ptr::write_unaligned(to as *mut [u8; W], head);
        std::ptr::write_unaligned(to.add(tail) as *mut [u8; W], last);
    }
}

#[inline(always)]
unsafe fn line<const N: usize>(src: *const u8, s: isize, dst: *mut u8, d: isize, n: usize) {
    for i in 0..n as isize {
        std::ptr::copy_nonoverlapping(src.offset(i * s), dst.offset(i * d), N);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims() {
        assert_eq!(Dim::from_triple(0, 10, 3).unwrap().count, 4);
        assert!(!Dim::from_triple(0, 10, 3).unwrap().within(9));
        assert!(Dim::from_triple(0, 10, 3).unwrap().within(10));
        assert_eq!(Dim::from_triple(5, 2, 1).unwrap().count, 0);
        assert!(Dim::from_triple(0, 2, 0).is_none());
    }

    #[test]
    fn scatter_swap() {
        let src = [1u8, 2, 3, 4];
        let mut dst = [0u8; 4];
        let out = OutArray { ptr: dst.as_mut_ptr(), shape: vec![2], strides: vec![2], itemsize: 2 };
        let sel = [Dim { start: 0, step: 1, count: 2 }];
        scatter(&src, &[2], &sel, &out, &sel, 2).unwrap();
        assert_eq!(dst, [2, 1, 4, 3]);
    }

    #[test]
    fn short_rows_copy_as_a_plain_copy_does() {
        // Rows of every length around the short path's bounds, strided both sides.
        for itemsize in [1usize, 2, 4, 8] {
            for items in 1..=80 / itemsize {
                let len = items * itemsize;
                let rows = 5;
                let (s, d) = (len as isize + 7, len as isize + 3);
                let src: Vec<u8> = (0..rows * (len + 7)).map(|i| (i * 7 + 1) as u8).collect();
                let mut got = vec![0u8; rows * (len + 3)];
                let mut want = got.clone();
                unsafe {
                    copy_nd(src.as_ptr(), &[s, itemsize as isize], got.as_mut_ptr(),
                            &[d, itemsize as isize], &[rows, items], itemsize, 0);
                }
                for r in 0..rows {
                    let (a, b) = (r * (len + 7), r * (len + 3));
                    want[b..b + len].copy_from_slice(&src[a..a + len]);
                }
                assert_eq!(got, want, "rows of {len} bytes");
            }
        }
    }
}
