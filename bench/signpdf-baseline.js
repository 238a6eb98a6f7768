// The @signpdf baseline: pdf-lib placeholder + @signpdf/signpdf with a local P12, whole file in memory.
import { readFileSync, writeFileSync } from 'node:fs';
import { PDFDocument } from 'pdf-lib';
import { pdflibAddPlaceholder } from '@signpdf/placeholder-pdf-lib';
import { P12Signer } from '@signpdf/signer-p12';
import { SignPdf } from '@signpdf/signpdf';

const [input, output, p12] = process.argv.slice(2);
const document = await PDFDocument.load(readFileSync(input), { updateMetadata: false });
pdflibAddPlaceholder({ pdfDoc: document, reason: 'bench', contactInfo: 'bench', name: 'bench', location: 'bench' });
const withPlaceholder = Buffer.from(await document.save({ useObjectStreams: false }));
const signer = new P12Signer(readFileSync(p12), { passphrase: 'bench' });
writeFileSync(output, await new SignPdf().sign(withPlaceholder, signer));
