/**
 * What every component test needs around jsdom: `CSS.escape`, which React Aria calls and jsdom lacks (the
 * css.escape polyfill, the spec's algorithm), and each test's render removed after it.
 */
import 'css.escape';

import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';

afterEach(cleanup);
