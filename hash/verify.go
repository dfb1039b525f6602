package hash

import (
	"context"
	"fmt"
	"slices"
)

// Computable reports whether this package can compute hashes of scheme s
// ("h1:" or "zh:").
func Computable(s Scheme) bool { return s == SchemeH1 || s == SchemeZH }

// Preferred returns the hashes among hs that this package can compute,
// de-duplicated, "h1:" hashes first (they can be checked against both a zip
// and an unpacked directory), then "zh:", each group sorted. Hashes of other
// schemes are left out.
func Preferred(hs []Hash) []Hash {
	var h1, zh []Hash
	for _, h := range hs {
		switch h.Scheme() {
		case SchemeH1:
			h1 = append(h1, h)
		case SchemeZH:
			zh = append(zh, h)
		}
	}
	slices.Sort(h1)
	slices.Sort(zh)
	return append(slices.Compact(h1), slices.Compact(zh)...)
}

// Verify applies the lock file's rule to a package named path whose
// computed hashes are got, against the recorded hashes want:
//
//   - If want is empty, nothing was recorded: the package is accepted and
//     all of got is returned, to be recorded (trust on first use).
//   - Otherwise only the recorded hashes of a scheme in got count. If there is
//     none, the error wraps [ErrNoComputableHash].
//   - If any hash in got equals one of them, the package is accepted, and
//     the hashes of got not yet in want are returned: the caller may add
//     them to the lock file (for example the h1 of a package verified by its
//     signed zh).
//   - Otherwise the error is a [*MismatchError].
func Verify(path string, got, want []Hash) (add []Hash, err error) {
	if len(want) == 0 {
		return Preferred(got), nil
	}
	schemes := make(map[Scheme]bool)
	for _, h := range got {
		schemes[h.Scheme()] = true
	}
	var checked []Hash
	for _, h := range Preferred(want) {
		if schemes[h.Scheme()] {
			checked = append(checked, h)
		}
	}
	if len(checked) == 0 {
		return nil, &PackageError{Path: path, Err: fmt.Errorf("%w: recorded %s, computed %s", ErrNoComputableHash, joinHashes(want), joinHashes(got))}
	}
	matched := false
	for _, h := range got {
		if slices.Contains(checked, h) {
			matched = true
		}
	}
	if !matched {
		var gotChecked []Hash
		for _, h := range Preferred(got) {
			for _, w := range checked {
				if w.Scheme() == h.Scheme() {
					gotChecked = append(gotChecked, h)
					break
				}
			}
		}
		return nil, &MismatchError{Path: path, Got: gotChecked, Want: checked}
	}
	for _, h := range Preferred(got) {
		if !slices.Contains(want, h) {
			add = append(add, h)
		}
	}
	return add, nil
}

// VerifyDir checks the directory dir against the recorded hashes want by
// its h1 (a directory has no zh), with the zero [Options]. It returns nil if
// want is empty or the h1 is among want, a [*MismatchError] if it is not, and
// an error wrapping [ErrNoComputableHash] if want has no "h1:" hash.
func VerifyDir(dir string, want []Hash) error {
	_, err := Options{}.VerifyDir(context.Background(), dir, want)
	return err
}

// VerifyDir is the package-level [VerifyDir] with options. It also returns
// the hashes that may be added to the lock file (see [Verify]).
func (o Options) VerifyDir(ctx context.Context, dir string, want []Hash) (add []Hash, err error) {
	if len(want) > 0 && !hasScheme(want, SchemeH1) {
		return nil, &PackageError{Path: dir, Err: fmt.Errorf("%w: recorded %s; a directory has only an h1: hash", ErrNoComputableHash, joinHashes(want))}
	}
	h1, err := o.H1Dir(ctx, dir)
	if err != nil {
		return nil, err
	}
	return Verify(dir, []Hash{h1}, want)
}

// VerifyZip checks the zip archive at path against the recorded hashes
// want, with the zero [Options]. A recorded "zh:" is checked first, without
// inflating anything; the archive's h1 is computed only if no recorded zh
// matches and an h1 is recorded.
func VerifyZip(path string, want []Hash) error {
	_, err := Options{}.VerifyZip(context.Background(), path, want)
	return err
}

// VerifyZip is the package-level [VerifyZip] with options. It returns the
// hashes that may be added to the lock file (see [Verify]); when the
// archive was accepted by its zh alone, its h1 was not computed and is not
// among them.
func (o Options) VerifyZip(ctx context.Context, path string, want []Hash) (add []Hash, err error) {
	if hasScheme(want, SchemeZH) {
		zh, err := ZH(path)
		if err != nil {
			return nil, err
		}
		if slices.Contains(want, zh) {
			return Verify(path, []Hash{zh}, want)
		}
		if !hasScheme(want, SchemeH1) {
			return Verify(path, []Hash{zh}, want)
		}
	}
	sum, err := o.HashZip(ctx, path)
	if err != nil {
		return nil, err
	}
	return Verify(path, sum.Hashes(), want)
}

func hasScheme(hs []Hash, s Scheme) bool {
	for _, h := range hs {
		if h.Scheme() == s {
			return true
		}
	}
	return false
}
