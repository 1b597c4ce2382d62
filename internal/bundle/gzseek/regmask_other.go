//go:build !amd64

package gzseek

// regSizeMaskUint32 leaves a shift count alone where the hardware does not
// mask it (from klauspost/compress flate/regmask_other.go).
const regSizeMaskUint32 = ^uint(0)
