/** How tall a row of a virtualised list is drawn (the file table's rows are this tall in browser.css too). */
export const ROW_HEIGHT = 34;
/** Rows kept rendered above and below the visible ones, so fast scrolling does not show blanks. */
export const OVERSCAN = 8;
