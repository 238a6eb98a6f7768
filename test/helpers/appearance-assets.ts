/** For tests: esign's default font (Noto Sans, from the package the build copies it from), loaded once. */
import { readFileSync } from 'node:fs';
import { AppearanceFont } from '../../src/core/pdf/appearance.js';
import { AppearanceFonts } from '../../src/core/pdf/appearance-fonts.js';
import type { AppearanceAssets } from '../../src/core/pdf/placeholder.js';

const assets: AppearanceAssets = {
  fonts: new AppearanceFonts([
    await AppearanceFont.load(
      readFileSync(
        new URL('../../node_modules/@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf', import.meta.url),
      ),
      'the default font',
    ),
  ]),
};

export function testAppearanceAssets(): AppearanceAssets {
  return assets;
}
