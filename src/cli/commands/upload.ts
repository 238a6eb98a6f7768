import type { Command } from 'commander';
import type { CommandModule } from '../command.js';

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  program
    .command('upload')
    .summary('upload files to your storage bucket')
    .description(
      'Upload files to your own bucket at the storage service, as PREFIX/BASENAME. Streams each file ' +
        '(multipart for large ones) and prints bucket, key, size and SHA-256. Needs a login with scope ' +
        'com.vendor.storage. An existing object is never replaced without --overwrite.',
    )
    .argument('<files...>', 'files to upload')
    .option('--prefix <prefix>', 'key prefix, e.g. contracts/2025 (keys are PREFIX/BASENAME)')
    .option('--overwrite', 'replace objects that already exist', false)
    .addHelpText(
      'after',
      '\nExamples:\n  esign login --scope openid --scope com.vendor.storage\n  esign upload signed/*.pdf --prefix contracts/2025\n  esign upload report.pdf --overwrite --json',
    )
    .action((files: string[], options: { prefix?: string; overwrite: boolean }, command: Command) =>
      run(command, async (ctx) => {
        const { uploadFiles } = await import('../service-clients.js');
        await uploadFiles(ctx, files, { prefix: options.prefix, overwrite: options.overwrite });
      }),
    );
};
