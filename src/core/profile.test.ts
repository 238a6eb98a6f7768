import { describe, expect, it } from 'vitest';
import { isEsignError } from './errors.js';
import { parseSecretsFile, parseSettingValue, resolveSettings } from './profile.js';

describe('resolveSettings', () => {
  it('takes flag over env over profile over default, and records the source', () => {
    const { settings, sources } = resolveSettings({
      flags: { credential: 'from-flag' },
      env: {
        ESIGN_CREDENTIAL: 'from-env',
        ESIGN_CLIENT_ID: 'client-env',
        ESIGN_TSA_URL: 'https://tsa.one/tss03, https://tsa.two/tss03',
      },
      stored: { credential: 'from-profile', clientId: 'client-profile', region: 'eu-west-1', lang: 'nl' },
      defaults: {
        credential: 'default',
        clientId: 'client-default',
        region: 'us-east-1',
        lang: 'en',
        redirectUri: 'http://127.0.0.1:8765/callback',
      },
    });
    expect(settings.credential).toBe('from-flag');
    expect(sources.credential).toBe('flag');
    expect(settings.clientId).toBe('client-env');
    expect(sources.clientId).toBe('env');
    expect(settings.region).toBe('eu-west-1');
    expect(sources.region).toBe('profile');
    expect(settings.redirectUri).toBe('http://127.0.0.1:8765/callback');
    expect(sources.redirectUri).toBe('default');
    expect(settings.tsaUrls).toEqual(['https://tsa.one/tss03', 'https://tsa.two/tss03']);
  });

  it('ignores empty environment variables', () => {
    const { settings, sources } = resolveSettings({ env: { ESIGN_CREDENTIAL: '' }, stored: { credential: 'kept' } });
    expect(settings.credential).toBe('kept');
    expect(sources.credential).toBe('profile');
  });

  it('rejects invalid environment values with CONFIG_INVALID', () => {
    expect(() => resolveSettings({ env: { ESIGN_LANG: 'fr' } })).toThrowError(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
  });
});

describe('parseSettingValue', () => {
  it('parses URLs, lists, booleans and levels', () => {
    expect(parseSettingValue('signingBaseUrl', 'https://sign.example/csc/')).toBe('https://sign.example/csc');
    expect(parseSettingValue('clientSecretInBody', 'yes')).toBe(true);
    expect(parseSettingValue('level', 'B-LTA')).toBe('B-LTA');
    expect(parseSettingValue('trustAnchors', 'a.pem,b.pem')).toEqual(['a.pem', 'b.pem']);
    expect(parseSettingValue('cscVersion', '2')).toBe('2');
    expect(parseSettingValue('cscMaxSignatures', '10')).toBe(10);
    expect(parseSettingValue('cscSadAsBearer', 'true')).toBe(true);
    expect(parseSettingValue('serviceAuth', 'client-credentials')).toBe('client-credentials');
    expect(parseSettingValue('cscMaxSignatures', '1000')).toBe(1000);
  });

  it('refuses what is not a URL or level', () => {
    for (const [key, value] of [
      ['signingBaseUrl', 'not a url'],
      ['tsaUrls', 'ftp://tsa.example'],
      ['level', 'B-X'],
      ['clientSecretInBody', 'maybe'],
      ['cscVersion', '1.0.4'],
      ['cscMaxSignatures', '0'],
      ['cscMaxSignatures', '1001'],
      ['serviceAuth', 'oauth'],
      ['cscMaxSignatures', '2.5'],
    ] as const) {
      try {
        parseSettingValue(key, value);
        expect.unreachable(`${key}=${value} was accepted`);
      } catch (error) {
        expect(isEsignError(error, 'CONFIG_INVALID')).toBe(true);
      }
    }
  });
});

describe('parseSecretsFile', () => {
  it('reads NAME=value lines and skips comments', () => {
    expect(parseSecretsFile('# secrets\nCLIENT_SECRET=abc\n  TSA_PASSWORD = "p w"\nnot a line\n')).toEqual({
      CLIENT_SECRET: 'abc',
      TSA_PASSWORD: 'p w',
    });
  });
});
