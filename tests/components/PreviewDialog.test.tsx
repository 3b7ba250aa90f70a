// @vitest-environment jsdom
import './dom.js';

import { cleanup, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';

import { installApi } from '../../src/renderer/api.js';
import { PreviewDialog } from '../../src/renderer/components/PreviewDialog.js';
import { ERROR_WORDS } from '../../src/renderer/error-messages.js';
import { PREVIEW_MAX_BYTES, type VaultEntry } from '../../src/shared/contract.js';
import { TEXT_PREVIEW_BYTES } from '../../src/shared/preview-kind.js';
import { fakeApi, Refusal, type FakeApi } from './fake-api.js';

const MiB = 1024 * 1024;

function file(name: string, size: number): VaultEntry {
  return { path: `/${name}`, name, type: 'file', size, mtime: 0 };
}

/** A back end whose files hold `byte` repeated, read in the ranges the window asks for. */
function vaultOf(byte: number): FakeApi {
  return fakeApi({
    'preview.read': ({ length }) => ({ bytes: new Uint8Array(length).fill(byte), fileSize: length }),
  });
}

const reads = (api: FakeApi) =>
  api.calls
    .filter((c) => c.channel === 'preview.read')
    .map((c) => c.request as { offset: number; length: number });

describe('the preview of a file', () => {
  it('shows a text file decrypted, and says when only its first MiB is shown', async () => {
    const api = vaultOf(0x61);
    installApi(api);
    render(<PreviewDialog vaultId="v" entry={file('notes.txt', 3 * MiB)} onClose={() => undefined} />);
    expect(await screen.findByText('Only the first MiB is shown.')).toBeTruthy();
    expect(screen.getByTestId('preview').querySelector('pre')?.textContent).toBe(
      'a'.repeat(TEXT_PREVIEW_BYTES),
    );
    expect(reads(api).reduce((sum, r) => sum + r.length, 0)).toBe(TEXT_PREVIEW_BYTES);
  });

  it('reads an image in bounded ranges, shows it from an object URL, and revokes that URL when it closes', async () => {
    const api = vaultOf(0);
    installApi(api);
    const created: Blob[] = [];
    const revoked: string[] = [];
    URL.createObjectURL = (blob: Blob) => `blob:test/${String(created.push(blob))}`;
    URL.revokeObjectURL = (url: string) => void revoked.push(url);
    const size = 2 * PREVIEW_MAX_BYTES + 5;
    const shown = render(
      <PreviewDialog vaultId="v" entry={file('photo.png', size)} onClose={() => undefined} />,
    );
    const image = await screen.findByRole('img', { name: 'photo.png' });
    expect(image.getAttribute('src')).toBe('blob:test/1');
    expect(created[0]?.size).toBe(size);
    expect(created[0]?.type).toBe('image/png');
    expect(reads(api).map((r) => [r.offset, r.length])).toEqual([
      [0, PREVIEW_MAX_BYTES],
      [PREVIEW_MAX_BYTES, PREVIEW_MAX_BYTES],
      [2 * PREVIEW_MAX_BYTES, 5],
    ]);
    shown.unmount();
    expect(revoked).toEqual(['blob:test/1']);
  });

  it('does not decrypt an image or a PDF over 64 MiB, and says so with its size', async () => {
    const api = vaultOf(0);
    installApi(api);
    render(<PreviewDialog vaultId="v" entry={file('scan.jpg', 80 * MiB)} onClose={() => undefined} />);
    expect(
      await screen.findByText(
        'This image is 83.9 MB, more than the 67.1 MB a preview decrypts into memory. Restore it to open it in another app.',
      ),
    ).toBeTruthy();
    cleanup();
    render(<PreviewDialog vaultId="v" entry={file('book.pdf', 80 * MiB)} onClose={() => undefined} />);
    expect(await screen.findByText(/^This PDF is 83\.9 MB, more than the 67\.1 MB/)).toBeTruthy();
    expect(reads(api)).toEqual([]);
  });

  it('offers the default app for a kind it cannot show, where the host can open one', async () => {
    installApi(vaultOf(0));
    const openWith = vi.fn();
    render(
      <PreviewDialog
        vaultId="v"
        entry={file('data.bin', 10)}
        onOpenWith={openWith}
        onClose={() => undefined}
      />,
    );
    expect(
      await screen.findByText(
        'This kind of file cannot be previewed here. Use “Open with default app” to open it in another app.',
      ),
    ).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Open with default app' }));
    expect(openWith).toHaveBeenCalledOnce();
  });

  it('says where to turn without a default app: restore the file', async () => {
    installApi(vaultOf(0));
    render(<PreviewDialog vaultId="v" entry={file('data.bin', 10)} onClose={() => undefined} />);
    expect(await screen.findByText(/Restore it to open it in another app\.$/)).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Open with default app' })).toBeNull();
  });

  it('says in words when the file is damaged, never the back end’s own message', async () => {
    installApi(fakeApi({ 'preview.read': () => new Refusal('INTEGRITY', 'chunk 3 failed: tag mismatch') }));
    render(<PreviewDialog vaultId="v" entry={file('notes.txt', 100)} onClose={() => undefined} />);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toBe(`${ERROR_WORDS.INTEGRITY.message} ${ERROR_WORDS.INTEGRITY.next}`);
  });

  it('closes by its Close button and by Escape', async () => {
    installApi(vaultOf(0x61));
    const close = vi.fn();
    render(<PreviewDialog vaultId="v" entry={file('notes.txt', 5)} onClose={close} />);
    await screen.findByText('aaaaa');
    await userEvent.click(screen.getByRole('button', { name: 'Close' }));
    await userEvent.keyboard('{Escape}');
    expect(close).toHaveBeenCalledTimes(2);
  });
});
