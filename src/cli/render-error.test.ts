import { describe, expect, it } from 'vitest';
import { EsignError, ExitCode } from '../core/errors.js';
import { renderError } from './render-error.js';

describe('renderError', () => {
  it('renders an EsignError as one line with its hint and exit code', () => {
    const error = new EsignError('OUTPUT_EXISTS', 'out.pdf already exists;\n esign does not overwrite files unasked.', {
      hint: 'Pass --force.',
    });
    const rendered = renderError(error);
    expect(rendered.line).toBe('esign: out.pdf already exists; esign does not overwrite files unasked. Pass --force.');
    expect(rendered.line).not.toContain('\n');
    expect(rendered.exitCode).toBe(ExitCode.output);
    expect(rendered.json.error).toMatchObject({ code: 'OUTPUT_EXISTS', exitCode: 8, hint: 'Pass --force.' });
  });

  it('derives exit codes from the code family', () => {
    expect(renderError(new EsignError('AUTH_DENIED', 'x')).exitCode).toBe(ExitCode.auth);
    expect(renderError(new EsignError('HTTP_UNREACHABLE', 'x')).exitCode).toBe(ExitCode.unavailable);
    expect(renderError(new EsignError('PDF_ENCRYPTED', 'x')).exitCode).toBe(ExitCode.input);
    expect(renderError(new EsignError('CREDENTIAL_DISABLED', 'x')).exitCode).toBe(ExitCode.credential);
    expect(renderError(new EsignError('VERIFY_FAILED', 'x')).exitCode).toBe(ExitCode.verification);
  });

  it('turns unknown errors into INTERNAL, keeping the stack for --verbose only', () => {
    const rendered = renderError(new TypeError('boom'));
    expect(rendered.exitCode).toBe(ExitCode.internal);
    expect(rendered.line).toMatch(/^esign: Unexpected internal error: boom\. Run again with --verbose/);
    expect(rendered.line).not.toContain('at ');
    expect(rendered.trace).toContain('TypeError: boom');
  });
});
