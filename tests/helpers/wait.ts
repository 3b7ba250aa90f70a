/**
 * The options for `vi.waitFor` of work that is real I/O or runs on real timers (commits with fsyncs, compaction, a
 * job's "waiting" told after a delay): its default of one second is short on a loaded two-core machine.
 */
export const WAIT_FOR_IO = { timeout: 10_000 } as const;
