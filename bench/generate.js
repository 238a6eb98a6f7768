// Writes benchmark PDFs of a given size without holding them in memory: N small pages plus one
// large binary stream (an embedded file) as padding, with a classic xref table or an xref stream.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { randomFillSync } from 'node:crypto';

/**
 * @param {string} path
 * @param {{ targetBytes: number, pages: number, xref: 'table' | 'stream' }} options
 */
export async function generatePdf(path, { targetBytes, pages, xref }) {
  const out = createWriteStream(path, { highWaterMark: 4 * 1024 * 1024 });
  let offset = 0;
  const offsets = [];
  const write = async (chunk) => {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
    offset += buffer.length;
    if (!out.write(buffer)) await once(out, 'drain');
  };
  const object = async (number, body) => {
    offsets[number] = offset;
    await write(`${number} 0 obj\n${body}\nendobj\n`);
  };

  await write('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
  const firstPage = 4;
  const padding = firstPage + pages * 2;
  const size = padding + 1 + (xref === 'stream' ? 1 : 0);
  await object(
    1,
    `<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles << /Names [(padding.bin) ${padding} 0 R] >> >> >>`,
  );
  const kids = Array.from({ length: pages }, (_, index) => `${firstPage + index * 2} 0 R`).join(' ');
  await object(2, `<< /Type /Pages /Count ${pages} /Kids [${kids}] >>`);
  await object(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  for (let index = 0; index < pages; index++) {
    const page = firstPage + index * 2;
    const content = `BT /F1 18 Tf 72 760 Td (Benchmark page ${index + 1} of ${pages}) Tj ET`;
    await object(
      page,
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${page + 1} 0 R >>`,
    );
    await object(page + 1, `<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  }
  const remaining = Math.max(0, targetBytes - offset - 400 - size * 20);
  offsets[padding] = offset;
  await write(`${padding} 0 obj\n<< /Type /Filespec /F (padding.bin) /EF << /F ${padding + 1} 0 R >> >>\nendobj\n`);
  offsets[padding + 1] = offset;
  await write(`${padding + 1} 0 obj\n<< /Type /EmbeddedFile /Length ${remaining} >>\nstream\n`);
  const block = Buffer.alloc(4 * 1024 * 1024);
  randomFillSync(block);
  for (let left = remaining; left > 0; left -= block.length)
    await write(left >= block.length ? block : block.subarray(0, left));
  await write('\nendstream\nendobj\n');
  // object numbers: 1..padding+1 (the embedded file stream is padding + 1)
  const count = padding + 2;
  if (xref === 'table') {
    const start = offset;
    let table = `xref\n0 ${count}\n0000000000 65535 f \n`;
    for (let number = 1; number < count; number++) table += `${String(offsets[number]).padStart(10, '0')} 00000 n \n`;
    await write(table);
    await write(`trailer\n<< /Size ${count} /Root 1 0 R >>\nstartxref\n${start}\n%%EOF\n`);
  } else {
    const xrefNumber = count;
    const start = offset;
    const width = 8;
    const rows = Buffer.alloc((count + 1) * (1 + width + 2));
    const put = (row, type, field2, field3) => {
      const at = row * (1 + width + 2);
      rows[at] = type;
      rows.writeUIntBE(Math.floor(field2 / 2 ** 32), at + 1, width - 4);
      rows.writeUInt32BE(field2 % 2 ** 32, at + 1 + width - 4);
      rows.writeUInt16BE(field3, at + 1 + width);
    };
    put(0, 0, 0, 65535);
    for (let number = 1; number < count; number++) put(number, 1, offsets[number], 0);
    put(xrefNumber, 1, start, 0);
    await write(
      `${xrefNumber} 0 obj\n<< /Type /XRef /Size ${count + 1} /W [1 ${width} 2] /Root 1 0 R /Length ${rows.length} >>\nstream\n`,
    );
    await write(rows);
    await write(`\nendstream\nendobj\nstartxref\n${start}\n%%EOF\n`);
  }
  out.end();
  await once(out, 'finish');
  return offset;
}
