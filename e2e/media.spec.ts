/** Audio previews play by range reads: only what the player asks for is decrypted, and nothing outlives the lock. */
import { dropFiles } from './drop.js';
import { expect, test } from './fixtures.js';
import { createVault } from './steps.js';

test.skip(
  ({ host }) => host === 'electron',
  "this flow fetches the preview server's /media/ URLs; Electron's coffer-media: protocol is covered by " +
    'tests/desktop/media-protocol.test.ts',
);

const SAMPLE_RATE = 8000;

/** A mono 16-bit WAV of `seconds` of a 440 Hz tone: about 16 KB a second, so several 64 KiB chunks. */
function toneWav(seconds: number): Buffer {
  const samples = SAMPLE_RATE * seconds;
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(SAMPLE_RATE, 24);
  wav.writeUInt32LE(SAMPLE_RATE * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++)
    wav.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / SAMPLE_RATE)), 44 + i * 2);
  return wav;
}

test('plays an audio file by range reads, seeks in it, and its URL stops answering at lock', async ({
  coffer,
}) => {
  const { page } = coffer;
  const ranges: string[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/media/'))
      ranges.push(request.headers().range ?? '(none)');
  });
  await createVault(coffer);
  await dropFiles(page, [{ name: 'tone.wav', bytes: toneWav(20) }]);
  await expect(page.getByText('Added 1 file.')).toBeVisible();

  await page.getByRole('row', { name: /tone\.wav/ }).click();
  await page.getByRole('button', { name: 'Preview' }).click();
  const player = page.getByRole('dialog', { name: 'Preview of tone.wav' }).locator('audio');
  await expect(player).toHaveAttribute('src', /\/media\/[\w-]{43}$/);
  const url = new URL((await player.getAttribute('src')) ?? '', page.url()).href;
  // Its length comes from the file's header and size, read by range.
  await expect.poll(() => player.evaluate((audio: HTMLAudioElement) => audio.duration)).toBeCloseTo(20, 0);
  await player.evaluate(
    (audio: HTMLAudioElement) =>
      new Promise<void>((seeked) => {
        audio.addEventListener('seeked', () => {
          seeked();
        });
        audio.currentTime = 15;
      }),
  );
  expect(await player.evaluate((audio: HTMLAudioElement) => audio.currentTime)).toBeCloseTo(15, 0);
  expect(ranges.length).toBeGreaterThan(0);
  expect(ranges.every((range) => /^bytes=\d+-\d*$/.test(range))).toBe(true);
  expect((await page.request.get(url, { headers: { range: 'bytes=0-3' } })).status()).toBe(206);

  await page.keyboard.press('Control+L');
  await expect(page.getByRole('button', { name: 'Unlock' })).toBeVisible();
  expect(await page.content()).not.toContain('tone.wav');
  expect((await page.request.get(url, { headers: { range: 'bytes=0-3' } })).status()).toBe(404);
});
