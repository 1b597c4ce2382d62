package gzseek

// regSizeMaskUint32 masks a shift of a 32-bit value: x86 shifts by the
// count modulo the register size already (from klauspost/compress
// flate/regmask_amd64.go).
const regSizeMaskUint32 = 31
