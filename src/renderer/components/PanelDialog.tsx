import '../panels.css';

import type { ReactNode } from 'react';
import { Dialog, Heading, Modal, ModalOverlay } from 'react-aria-components';

/**
 * A modal dialog titled with what it shows, closed by its Close button, Esc or a click outside (React Aria
 * traps the focus inside and gives it back after).
 */
export function PanelDialog({
  title,
  label,
  aside,
  wide = false,
  onClose,
  children,
}: {
  title: string;
  /** The accessible name when it should say more than the title. */
  label?: string;
  /** Shown between the title and Close (a file's size, say). */
  aside?: ReactNode;
  wide?: boolean;
  onClose: () => void;
  children: ReactNode;
}) {
  return (
    <ModalOverlay
      isOpen
      isDismissable
      onOpenChange={(open) => {
        if (!open) onClose();
      }}
      className="modal-backdrop"
    >
      <Modal className={wide ? 'modal wide-modal' : 'modal'}>
        <Dialog className="dialog" {...(label === undefined ? {} : { 'aria-label': label })}>
          <header className="dialog-header">
            <Heading slot="title">{title}</Heading>
            {aside}
            <button type="button" className="small" onClick={onClose}>
              Close
            </button>
          </header>
          {children}
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
