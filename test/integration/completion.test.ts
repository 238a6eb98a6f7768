/**
 * `esign completion`: the bash script run by bash itself on prefixes (COMP_WORDS/COMP_CWORD and the
 * generated function), for commands, options, option values and profile names; the lists come from
 * the program's own definition.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { buildProgram, COMMANDS } from '../../src/cli/program.js';
import { ESIGN_BIN, runCli } from '../helpers/run-cli.js';
import { tempDirForFile } from '../helpers/tmp.js';

let work: { dir: string; remove: () => Promise<void> };
let env: Record<string, string>;
let script: string;

beforeAll(async () => {
  work = await tempDirForFile('esign-completion-');
  env = { ESIGN_CONFIG_DIR: work.dir };
  expect((await runCli(['config', 'init', 'work-eu'], { env })).code).toBe(0);
  const printed = await runCli(['completion', 'bash'], { env });
  expect(printed.code, printed.stderr).toBe(0);
  script = printed.stdout;
});
afterAll(() => work?.remove());

/** What bash's completion offers for the command line `words` (the last is the word being completed). */
function complete(...words: string[]): string[] {
  const line = ['esign', ...words];
  const program = [
    script,
    // COMP_WORDS[0] is the program as typed; here the built bin, which the script asks for profile names.
    `COMP_WORDS=(${[ESIGN_BIN, ...words].map((word) => `'${word}'`).join(' ')})`,
    `COMP_CWORD=${line.length - 1}`,
    '_esign',
    `printf '%s\\n' "\${COMPREPLY[@]}"`,
  ].join('\n');
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', program], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter(Boolean);
}

async function definedCommand(name: string): Promise<Command> {
  const program = await buildProgram([name]);
  return program.commands.find((command) => command.name() === name)!;
}

describe('esign completion bash, run by bash', () => {
  it('completes every command of the program, and only those, after esign', () => {
    expect(complete('')).toEqual(COMMANDS.map((command) => command.name));
    expect(complete('s')).toEqual(['sign', 'storage', 'sandbox']);
    expect(complete('comp')).toEqual(['completion']);
  });

  it("completes a command's options as the program defines them, with the global ones", async () => {
    const sign = await definedCommand('sign');
    const longOptions = sign.options.map((option) => option.long!).filter(Boolean);
    const offered = complete('sign', '--');
    expect(offered).toEqual(expect.arrayContaining([...longOptions, '--profile', '--json', '--help']));
    expect(complete('sign', '--out')).toEqual(['--output', '--output-dir']);
    expect(complete('verify', '--out')).toEqual([]);
  });

  it('completes subcommands, and skips options and their values on the way', () => {
    expect(complete('config', '')).toEqual(['init', 'set', 'unset', 'get', 'list', 'use', 'path']);
    expect(complete('--profile', 'work-eu', '--json', 'credentials', 'l')).toEqual(['list']);
    expect(complete('sign', '-o', 'out.pdf', '--forc')).toEqual(['--force']);
  });

  it('completes the values of options with a fixed set', () => {
    expect(complete('sign', '--level', 'B-L')).toEqual(['B-LT', 'B-LTA']);
    expect(complete('login', '--lang', '')).toEqual(['en', 'nl']);
  });

  it('completes profile names, built in and stored, after --profile and config use', () => {
    expect(complete('--profile', '')).toEqual(['sandbox', 'sandbox-v2', 'env', 'work-eu']);
    expect(complete('sign', '--profile', 'w')).toEqual(['work-eu']);
    expect(complete('config', 'use', 'sand')).toEqual(['sandbox', 'sandbox-v2']);
  });

  it('leaves file arguments to the shell (-o default)', () => {
    expect(complete('sign', 'contr')).toEqual([]);
    expect(script).toMatch(/^complete -o default -F _esign esign$/m);
  });
});

describe('esign completion', () => {
  it('prints zsh and fish scripts with the same commands', async () => {
    const zsh = await runCli(['completion', 'zsh'], { env });
    expect(zsh.code).toBe(0);
    expect(zsh.stdout).toContain('bashcompinit');
    expect(zsh.stdout).toContain("subcommands='sign verify");
    const fish = await runCli(['completion', 'fish'], { env });
    expect(fish.code).toBe(0);
    for (const { name } of COMMANDS)
      expect(fish.stdout).toContain(`complete -c esign -n '__fish_use_subcommand' -f -a '${name}'`);
    expect(fish.stdout).toContain("-l level -x -a 'B-B B-T B-LT B-LTA'");
  });

  it('prints the script and the profile names as JSON with --json', async () => {
    const printed = await runCli(['--json', 'completion', 'bash'], { env });
    expect(printed.json()).toEqual({ schemaVersion: 2, shell: 'bash', script });
    const profiles = await runCli(['--json', 'completion', '--list-profiles'], { env });
    expect(profiles.json()).toEqual({ schemaVersion: 2, profiles: ['sandbox', 'sandbox-v2', 'env', 'work-eu'] });
  });

  it('refuses an unknown or missing shell with exit 2, naming the shells it knows', async () => {
    for (const args of [['completion', 'tcsh'], ['completion']]) {
      const result = await runCli(args, { env });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/esign completion knows bash, zsh, fish/);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
