/** Test images: a real 2×2 PNG (valid chunks and CRCs), random pixels unless `pixels` (6 bytes) are given, so each call is a distinct file. */
import { crc32, deflateSync } from 'node:zlib';

export function png(pixels: Buffer = Buffer.from(Array.from({ length: 6 }, () => Math.floor(Math.random() * 256)))): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td) >>> 0);
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.from([0, 0, 0, 2, 0, 0, 0, 2, 8, 2, 0, 0, 0]);
  const raw = Buffer.concat([Buffer.from([0]), pixels, Buffer.from([0]), Buffer.alloc(6, 9)]);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}
