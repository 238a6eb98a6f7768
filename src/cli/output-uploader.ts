import { EsignError, isEsignError } from '../core/errors.js';
import type { SignJob } from '../core/sign-workflow.js';
import type { Context } from './context.js';

/**
 * `--upload`: each output is uploaded as soon as it is written (as `esign upload` would, `--overwrite`
 * to replace an object), so a later failure loses no upload. A failed upload fails its document; its
 * local output stays.
 */
export async function outputUploader(
  ctx: Context,
  jobs: Iterable<Pick<SignJob, 'output'>>,
  overwrite: boolean,
): Promise<(output: string) => Promise<void>> {
  const [{ assertDistinctKeys }, { openUploader }] = await Promise.all([
    import('../io/storage-client.js'),
    import('./service-clients.js'),
  ]);
  assertDistinctKeys(
    Array.from(jobs, (job) => job.output),
    undefined,
  );
  const upload = await openUploader(ctx, { overwrite });
  return async (output) => {
    try {
      await upload(output);
    } catch (error) {
      if (!isEsignError(error)) throw error;
      throw new EsignError(error.code, `${output} was written but not uploaded: ${error.message}`, {
        hint: error.hint,
        exitCode: error.exitCode,
        details: error.details,
        cause: error,
      });
    }
  };
}
