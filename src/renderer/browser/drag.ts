/**
 * Moving rows by dragging them onto a folder (a folder row, a breadcrumb, a sidebar folder), and adding files
 * dragged in from the file manager onto a particular folder. Plain HTML drag and drop: the rows are the drag
 * sources, so the same events serve both, told apart by the data's type.
 */
import { useState, type DragEvent } from 'react';

import { holdsFiles } from '../stray-drops.js';
import { isWithin } from './entries.js';

/** The data type that marks a drag of vault rows (their paths, as JSON). */
const MOVE_TYPE = 'application/x-coffer-paths';

/** The rows being dragged in this window (dragover cannot read the data, only its types). */
let dragged: readonly string[] = [];

/** Starts dragging vault rows. */
export function startMoveDrag(event: DragEvent, paths: readonly string[]): void {
  dragged = paths;
  event.dataTransfer.setData(MOVE_TYPE, JSON.stringify(paths));
  event.dataTransfer.effectAllowed = 'move';
}

export function endMoveDrag(): void {
  dragged = [];
}

function isMoveDrag(event: DragEvent): boolean {
  return event.dataTransfer.types.includes(MOVE_TYPE);
}

/** Files dragged in from outside the window (not rows, nor text). */
export function isFileDrag(event: DragEvent): boolean {
  return holdsFiles(event.dataTransfer);
}

/** Files dragged in from outside the window, and how many of them are folders. */
export interface FileDrop {
  readonly files: readonly File[];
  readonly folders: number;
}

/** What a drop from the file manager holds (the browser tells folders apart only by its entries). */
export function fileDrop(transfer: DataTransfer): FileDrop {
  const folders = [...transfer.items].filter(
    (item) => item.kind === 'file' && item.webkitGetAsEntry()?.isDirectory === true,
  ).length;
  return { files: [...transfer.files], folders };
}

export interface FolderDropHandlers {
  /** Rows dropped on the folder: move them into it. */
  readonly onMove: (paths: readonly string[], folder: string) => void;
  /** Files from outside dropped on the folder: add them into it. */
  readonly onAddFiles?: (drop: FileDrop, folder: string) => void;
}

/**
 * Makes an element a drop target for `folder`: returns whether something droppable is over it (to highlight it)
 * and the props to spread on the element. A folder does not accept itself or a folder above it.
 */
export function useFolderDrop(folder: string, handlers: FolderDropHandlers) {
  const [over, setOver] = useState(false);
  const accepts = (event: DragEvent): boolean =>
    isMoveDrag(event)
      ? !dragged.some((path) => isWithin(folder, path))
      : handlers.onAddFiles !== undefined && isFileDrag(event);
  const props = {
    onDragOver(event: DragEvent) {
      if (!accepts(event)) return;
      event.preventDefault();
      event.stopPropagation();
      event.dataTransfer.dropEffect = isMoveDrag(event) ? 'move' : 'copy';
      setOver(true);
    },
    onDragLeave() {
      setOver(false);
    },
    onDrop(event: DragEvent) {
      setOver(false);
      if (!accepts(event)) return;
      event.preventDefault();
      event.stopPropagation();
      if (isMoveDrag(event)) {
        const paths = JSON.parse(event.dataTransfer.getData(MOVE_TYPE)) as string[];
        endMoveDrag();
        handlers.onMove(paths, folder);
      } else {
        handlers.onAddFiles?.(fileDrop(event.dataTransfer), folder);
      }
    },
  };
  return { over, props };
}
