package releases

// ResetsAheadConsumer says whether nats-server v, starting, moves a
// consumer whose delivered stream sequence is past its stream's last
// sequence back to that last sequence, and logs "JetStream consumer '<a> >
// <s> > <c>' delivered sequence X past last stream sequence of Y", for a
// consumer of replicas (its own, 1 for a consumer of a standalone server).
// consumer.go addConsumerWithAssignment: `if replicas == 1 && lseq < sseq
// && isRecovering` then reconcileStateWithStream and store.ForceUpdate
// (2.14.10 consumer.go:1333, 2.15.2 consumer.go:1370; nats-server PR
// #7692); absent from the 2.10.27, 2.11.17 and 2.12.15 source (there a
// consumer keeps its delivered sequence and skips the stream's new
// messages up to it). Replicated consumers are not reset on any release
// read. Run (the ahead family): on 2.15.3 and 2.14.10 the R1 consumers (one
// of an R3 stream, one of a standalone server's stream) were reset at the
// start and logged the line, the R3 consumer kept delivered 40 over a
// stream ending at 32; on 2.12.15 all three kept it and nothing was
// logged, and on 2.10.27 the R1 consumers of an R1 stream of the cluster
// and of the standalone server kept theirs. known is false where SourceRead cannot tell (2.13, past a line's
// newest release read, 2.16+).
func ResetsAheadConsumer(v string, replicas int) (yes, known bool) {
	mi, _, ok := SourceRead(v)
	if !ok {
		return false, false
	}
	return mi >= 14 && replicas <= 1, true
}

// KeepsPriorLastSeqOf is KeepsPriorLastSeq for a stream of replicas:
// 2.11.4 to 2.11.17 keep a stale index.db's last sequence always; 2.12.1
// to 2.15.3 only where the stream's store does not flush asynchronously,
// which is an R1 stream (a replicated one flushes asynchronously unless
// sync_always, which is not read here; stream.go v2.12.15:908,
// v2.15.3:1116). Run (the ahead family): the R1 stream EVENTS of a
// cluster, its last 6 records cut after a graceful stop, kept last_seq 30
// over blocks ending at 24 on 2.12.15, 2.14.10 and 2.15.3 and reported 24
// on 2.10.27; the R3 stream ORDERS reported the blocks' 32 on 2.12.15,
// 2.14.10 and 2.15.3. known is false for 2.10 (kept only when the rebuild
// found lost data) and where SourceRead cannot tell.
func KeepsPriorLastSeqOf(v string, replicas int) (yes, known bool) {
	if yes, known := KeepsPriorLastSeq(v); known {
		return yes, true
	}
	mi, pa, ok := SourceRead(v)
	if !ok || mi < 12 || mi == 12 && pa < 1 {
		return false, false
	}
	return replicas == 1, true
}
