// Package jobsys is a job system in the spirit of the seeds' larger
// subjects: clients submit jobs to a priority queue; a resizable pool of
// workers runs them with retries and per-attempt timeouts; each job's
// output flows through a three-stage pipeline (parse, transform, sink)
// connected by channels, and the sinks fan in to an aggregator; a poller
// watches job states through the status API; the system shuts down while
// a late client is still submitting.
//
// Its races are the realistic kind, each argued where it is marked:
//   - a job's state and result are written by its worker without the
//     registry lock that guards the job table, and read by the status API
//     (js-state-*, js-result);
//   - workers read the pool's target size without the lock Resize writes
//     it under (js-size, benign: exit rechecks under the lock);
//   - the sinks append to the aggregator's results without a lock
//     (js-agg), losing results;
//   - the processed/failed counters are plain fields (js-processed*);
//   - an attempt that times out leaves its goroutine writing the error the
//     caller reads (js-retry-err, flaky: only when the timeout fires);
//   - Submit checks the closed flag without the lock before rechecking
//     under it (js-closed, benign).
//
// Lockset false alarms: a job's spec is written by Submit before the job
// is queued under the queue's lock and read by the worker after it was
// dequeued under the same lock, with neither access holding it
// (js-spec); pipeline records are handed from stage to stage over
// channels (js-stage).
package jobsys
