import { describe, expect, it } from 'vitest';
import { isProfileKey, parseSettingValue } from './profile.js';
import { PROVIDER_PRESETS } from './provider-presets.js';
import { isQuirkName } from '../sandbox/signing/quirks.js';

describe('provider presets', () => {
  it.each(Object.entries(PROVIDER_PRESETS))(
    '%s: every value is a valid setting with its source, and what emulates it is a sandbox quirk',
    (_id, preset) => {
      expect(Object.keys(preset.settings).length).toBeGreaterThan(0);
      for (const [key, { value, source }] of Object.entries(preset.settings)) {
        expect(isProfileKey(key), key).toBe(true);
        if (isProfileKey(key)) expect(() => parseSettingValue(key, value)).not.toThrow();
        expect(source.length, `${key} has a source`).toBeGreaterThan(10);
      }
      for (const quirk of preset.emulatedBy) expect(isQuirkName(quirk), quirk).toBe(true);
    },
  );
});
