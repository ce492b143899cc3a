/**
 * A fake screen for the computer-use example: a grid of grey levels (0-255)
 * with labelled buttons drawn on it. Each button has its own shade and a
 * small pattern, so a crop around it is recognisable.
 */
export type Pixels = number[][];

export interface Button { label: string; x: number; y: number }

export const WIDTH = 96;
export const HEIGHT = 64;
const HALF = 4; // buttons are 9x9

function shade(label: string): number {
  return 40 + ((label.charCodeAt(0) - 65) * 37) % 200;
}

export function draw(buttons: readonly Button[]): Pixels {
  const pixels: Pixels = Array.from({ length: HEIGHT }, () => new Array<number>(WIDTH).fill(255));
  for (const b of buttons) {
    for (let dy = -HALF; dy <= HALF; dy++) {
      for (let dx = -HALF; dx <= HALF; dx++) {
        const border = Math.abs(dx) === HALF || Math.abs(dy) === HALF;
        pixels[b.y + dy][b.x + dx] = border ? 0 : (dx + dy) % 2 === 0 ? shade(b.label) : 255 - shade(b.label);
      }
    }
  }
  return pixels;
}

/** The pixels in a square of radius r around (x, y); outside the screen reads as white. */
export function crop(pixels: Pixels, x: number, y: number, r = 6): Pixels {
  const out: Pixels = [];
  for (let j = y - r; j <= y + r; j++) {
    const row: number[] = [];
    for (let i = x - r; i <= x + r; i++) row.push(pixels[j]?.[i] ?? 255);
    out.push(row);
  }
  return out;
}

/** 1 for identical crops, 0 for opposite ones: one minus the mean absolute difference. */
export function similarity(a: Pixels, b: Pixels): number {
  let diff = 0;
  let n = 0;
  for (let j = 0; j < a.length; j++) {
    for (let i = 0; i < a[j].length; i++) {
      diff += Math.abs(a[j][i] - (b[j]?.[i] ?? 255));
      n++;
    }
  }
  return n === 0 ? 0 : 1 - diff / (255 * n);
}

/** A pretend vision model: finds a button by its shade in the pixels. */
export function locate(pixels: Pixels, label: string): { x: number; y: number } | undefined {
  for (let y = HALF; y < HEIGHT - HALF; y++) {
    for (let x = HALF; x < WIDTH - HALF; x++) {
      if (pixels[y][x] === shade(label) && pixels[y - HALF][x] === 0 && pixels[y][x - HALF] === 0) return { x, y };
    }
  }
  return undefined;
}
