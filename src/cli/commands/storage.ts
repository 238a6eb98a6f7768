import { basename } from 'node:path';
import type { Command } from 'commander';
import type { StoredObject } from '../../io/storage-client.js';
import { table } from '../io.js';
import type { CommandModule } from '../command.js';

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  const storage = program
    .command('storage')
    .summary('list, download and delete objects in your bucket')
    .description(
      'List, download and delete objects in your own bucket at the storage service (login with scope com.vendor.storage).',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  esign storage ls contracts/\n  esign storage get contracts/a-signed.pdf ./a.pdf\n  esign storage rm contracts/a-signed.pdf',
    );

  storage
    .command('ls [prefix]')
    .description('list the objects in your bucket (under PREFIX)')
    .action((prefix: string | undefined, _options: unknown, command: Command) =>
      run(command, async (ctx) => {
        const [{ openStorage }, { formatSize }] = await Promise.all([
          import('../service-clients.js'),
          import('../../io/storage-client.js'),
        ]);
        const session = await openStorage(ctx);
        const objects: StoredObject[] = [];
        for await (const object of session.list(prefix)) objects.push(object);
        ctx.io.result({ bucket: session.bucket, prefix: prefix ?? '', objects }, () =>
          objects.length === 0
            ? `(no objects${prefix ? ` under ${prefix}` : ''} in bucket ${session.bucket})`
            : `bucket ${session.bucket}\n` +
              table(
                ['key', 'size', 'last modified'],
                objects.map((object) => [object.key, formatSize(object.size), object.lastModified ?? '']),
              ),
        );
      }),
    );

  storage
    .command('get <key> [file]')
    .description('download an object to FILE (default: its base name in the current directory)')
    .option('--force', 'replace FILE if it exists', false)
    .action((key: string, file: string | undefined, options: { force: boolean }, command: Command) =>
      run(command, async (ctx) => {
        const [{ openStorage }, { formatSize }] = await Promise.all([
          import('../service-clients.js'),
          import('../../io/storage-client.js'),
        ]);
        const session = await openStorage(ctx);
        const object = await session.download(key, file ?? basename(key), { overwrite: options.force });
        ctx.io.result(
          object,
          () =>
            `✓ s3://${object.bucket}/${object.key} → ${object.path} (${formatSize(object.size)}, sha256 ${object.sha256})`,
        );
      }),
    );

  storage
    .command('rm <key>')
    .description('delete an object')
    .action((key: string, _options: unknown, command: Command) =>
      run(command, async (ctx) => {
        const { openStorage } = await import('../service-clients.js');
        const session = await openStorage(ctx);
        const object = await session.remove(key);
        ctx.io.result(
          { bucket: object.bucket, key: object.key, deleted: true },
          () => `✓ deleted s3://${object.bucket}/${object.key}`,
        );
      }),
    );
};
