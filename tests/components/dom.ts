/**
 * What every component test needs around jsdom: `CSS.escape`, which React Aria calls and jsdom lacks (the
 * css.escape polyfill, the spec's algorithm); `document.hasFocus` as a browser answers it in a window that has the
 * keyboard (jsdom's says whether an element has the focus, so it is false while the focus moves); and each test's
 * render removed after it.
 */
import 'css.escape';

import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';

Object.defineProperty(document, 'hasFocus', { configurable: true, value: () => true });

afterEach(cleanup);
