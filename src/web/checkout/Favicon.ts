/**
 * The service's favicon, drawn in code (no binary in the repository): a 32×32 ICO holding one 32-bit bitmap, a
 * blue disc with a white ring, the checkout's accent colour. Served same-origin at `/favicon.ico`.
 */
export const favicon = (): Buffer => {
  const size = 32
  const header = Buffer.alloc(6 + 16 + 40)
  header.writeUInt16LE(0, 0)
  header.writeUInt16LE(1, 2) // an icon
  header.writeUInt16LE(1, 4) // one image
  const pixels = Buffer.alloc(size * size * 4)
  const mask = Buffer.alloc(size * 4) // one bit per pixel, rows padded to 4 bytes: all opaque, alpha decides
  header.writeUInt8(size, 6)
  header.writeUInt8(size, 7)
  header.writeUInt16LE(1, 10) // planes
  header.writeUInt16LE(32, 12) // bits per pixel
  header.writeUInt32LE(40 + pixels.length + mask.length, 14)
  header.writeUInt32LE(22, 18)
  header.writeUInt32LE(40, 22)
  header.writeInt32LE(size, 26)
  header.writeInt32LE(size * 2, 30) // the bitmap's height counts the mask too
  header.writeUInt16LE(1, 34)
  header.writeUInt16LE(32, 36)
  header.writeUInt32LE(pixels.length + mask.length, 42)
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++) {
      const d = Math.hypot(x + 0.5 - size / 2, y + 0.5 - size / 2)
      const at = (y * size + x) * 4 // rows run bottom-up; the drawing is symmetric
      const ring = d >= 7 && d <= 10
      if (d > 15.5) continue
      pixels.writeUInt8(ring ? 0xff : 0xd0, at) // blue
      pixels.writeUInt8(ring ? 0xff : 0x57, at + 1) // green
      pixels.writeUInt8(ring ? 0xff : 0x0b, at + 2) // red
      pixels.writeUInt8(0xff, at + 3)
    }
  return Buffer.concat([header, pixels, mask])
}
