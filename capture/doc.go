// Package capture decodes captured nats-server monitoring JSON — /jsz,
// /raftz, /healthz, /varz — as found in support bundles: bare HTTP answers,
// arrays, JSON lines, pretty-printed objects one after another, natscli
// `nats server request …` lines, and `nats audit gather` archives.
//
// Decoding is lenient (fields differ between server versions; unknown fields
// are ignored) and bounded (MaxFileBytes per file, MaxAuditEntryBytes per
// archive entry). It never panics on bad input: problems are
// *CorruptError values naming the file and byte offset, returned next
// to everything that did decode. See FORMAT.md for the shapes.
package capture
