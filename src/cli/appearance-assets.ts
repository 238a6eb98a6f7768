/**
 * The fonts and image of a visible signature, read from their files once per run: the --font files
 * in the order given, then esign's bundled font (Noto Sans, SIL Open Font License, in dist/fonts/
 * beside the bundle), which a run with --font reads only when a character needs it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EsignError } from '../core/errors.js';
import { AppearanceFont } from '../core/pdf/appearance.js';
import { AppearanceFonts } from '../core/pdf/appearance-fonts.js';
import { AppearanceImage, MAX_IMAGE_BYTES } from '../core/pdf/appearance-image.js';
import type { AppearanceAssets, VisibleSignature } from '../core/pdf/placeholder.js';
import type { FontBytes } from '../core/pdf/truetype.js';
import { openFontFile } from '../io/font-file.js';

/** Where the build puts the default font (scripts/bundle.mjs), relative to dist/cli/esign.cjs. */
const BUNDLED_FONT = new URL('../fonts/NotoSans-Regular.ttf', import.meta.url);
/** The same font where the sources run unbundled (tests): the package it comes from. */
const SOURCE_FONT = new URL(
  '../../node_modules/@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf',
  import.meta.url,
);

/** A --font file larger than this is read as cut there (and refused as no font). */
const MAX_FONT_BYTES = 64 * 1024 * 1024;

const DEFAULT_FONT_LABEL = 'the default font (Noto Sans)';

const fonts = new Map<string, AppearanceFonts>();
const images = new Map<string, AppearanceImage>();

export async function loadAppearanceAssets(
  visible: VisibleSignature | undefined,
): Promise<AppearanceAssets | undefined> {
  if (!visible) return undefined;
  const files = visible.fontFiles ?? [];
  const key = JSON.stringify(files);
  let chain = fonts.get(key);
  if (!chain) {
    const loadDefault = async () => AppearanceFont.load(await defaultFont(), DEFAULT_FONT_LABEL);
    chain =
      files.length === 0
        ? new AppearanceFonts([await loadDefault()])
        : new AppearanceFonts(
            await Promise.all(files.map((file) => AppearanceFont.load(openFont(file), file))),
            loadDefault,
          );
    fonts.set(key, chain);
  }
  // Before any approval: the default font when a character the others lack needs it, and fontkit
  // when the text needs shaping (a font it cannot read is refused now).
  await chain.prepare(visible.lines.join('\n'));
  if (!visible.image) return { fonts: chain };
  let image = images.get(visible.image.file);
  if (!image) {
    image = await AppearanceImage.load(readAsset(visible.image.file, 'image', MAX_IMAGE_BYTES + 1), visible.image.file);
    images.set(visible.image.file, image);
  }
  return { fonts: chain, image };
}

/** Refuses, before any approval, appearance text no font can draw (naming the character). */
export function assertAppearanceDrawable(
  visible: VisibleSignature | undefined,
  assets: AppearanceAssets | undefined,
): void {
  if (!visible || !assets) return;
  assets.fonts.assertCovers(visible.lines.join('\n'), 'appearance text');
}

export interface AppearanceValues {
  name: string;
  date: string;
  reason: string;
  location: string;
  credential: string;
}

/**
 * The lines of a visible signature: `template` (`\\n` or a newline breaks a line) with its
 * placeholders filled, or the default — the signer and date, then the reason and location given.
 */
export function appearanceLines(template: string | undefined, values: AppearanceValues): string[] {
  if (template === undefined) {
    const lines = [`Digitally signed by ${values.name}`, `Date: ${values.date}`];
    if (values.reason) lines.push(`Reason: ${values.reason}`);
    if (values.location) lines.push(`Location: ${values.location}`);
    return lines;
  }
  const text = template.replace(/\\n/g, '\n').replace(/\{([^{}]*)\}/g, (whole, key: string) => {
    if (Object.hasOwn(values, key)) return values[key as keyof AppearanceValues];
    throw new EsignError('USAGE', `--appearance-text has an unknown placeholder ${whole}.`, {
      hint: 'Use {name}, {date}, {reason}, {location} and {credential}.',
    });
  });
  return text.split('\n');
}

async function defaultFont(): Promise<FontBytes | Uint8Array> {
  // In the single executable (npm run build:sea) the font is one of its assets.
  const sea = await import('node:sea').catch(() => undefined);
  if (sea?.isSea()) return new Uint8Array(sea.getAsset('NotoSans-Regular.ttf'));
  for (const url of [BUNDLED_FONT, SOURCE_FONT]) {
    try {
      return openFontFile(fileURLToPath(url), MAX_FONT_BYTES);
    } catch {
      // the next place
    }
  }
  throw new EsignError(
    'INTERNAL',
    "esign's bundled font (dist/fonts/NotoSans-Regular.ttf) is missing from this installation.",
    { hint: 'Reinstall esign, or give a font with --font FILE.' },
  );
}

function readAsset(path: string, what: 'image', limit: number): Uint8Array {
  try {
    const bytes = readFileSync(path);
    // An image over the bound is refused by its reader, naming the bound; only the first bytes past it are needed.
    return bytes.length > limit ? bytes.subarray(0, limit) : bytes;
  } catch (error) {
    throw unreadable(path, what, error);
  }
}

function openFont(path: string): FontBytes {
  try {
    return openFontFile(path, MAX_FONT_BYTES);
  } catch (error) {
    throw unreadable(path, 'font', error);
  }
}

function unreadable(path: string, what: 'font' | 'image', error: unknown): EsignError {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT'
      ? 'no such file'
      : code === 'EISDIR'
        ? 'it is a directory'
        : code === 'EACCES'
          ? 'permission denied'
          : (code ?? (error as Error).message);
  return new EsignError('USAGE', `Cannot read the ${what} ${path}: ${why}.`, {
    hint: `Check the path given to --${what}.`,
  });
}
