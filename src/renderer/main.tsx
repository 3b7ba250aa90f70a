/**
 * The renderer's entry. In Electron the preload has put the contract on `window.coffer`; in the preview the same
 * app talks to the preview server over HTTP and a WebSocket instead.
 */
import './styles.css';
import './start.css';

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';

import { createPreviewApi } from '../preview/bridge.js';
import { installApi } from './api.js';
import type { CofferApi } from '../shared/contract.js';
import { App } from './App.js';
import { refuseStrayDrops } from './stray-drops.js';
import { PreviewChooser } from './components/PreviewChooser.js';

// Electron's preload put the API there; otherwise this is the preview, which also needs the in-page chooser.
const preview = window.coffer === undefined ? createPreviewApi(window.location) : undefined;
installApi(window.coffer ?? (preview as CofferApi));
// Closing (or leaving) the page is the preview's "window closed": the back end locks if the setting says so.
if (preview) {
  window.addEventListener('pagehide', () => {
    preview.pageClosed();
  });
}

refuseStrayDrops(window);

const root = document.getElementById('root');
if (root === null) throw new Error('index.html has no #root element');
createRoot(root).render(
  <StrictMode>
    <App />
    {preview && <PreviewChooser chooser={preview.chooser} />}
  </StrictMode>,
);
