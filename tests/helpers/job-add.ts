import type { ResponseOf } from '../../src/shared/contract.js';

/** The id of the job a `job.add` started; throws when it answered with names taken instead. */
export function startedJobId(answer: ResponseOf<'job.add'>): string {
  if ('taken' in answer) throw new Error(`The add did not start: ${answer.taken.paths.join(', ')} taken.`);
  return answer.jobId;
}
