import { defineDict } from '../../i18n/define';

export default defineDict('tags', {
  en: {
    title: 'Tags', add: 'Add tag', table: 'Tags', name: 'Name', peers: 'Peers', registry: 'Registry', registered: 'registered', onPeersOnly: 'only on peers',
    peersLink: '{n} peers', peersLinkLabel: 'Show the {n} peers tagged {name}', deleteNamed: 'Delete {name}',
    confirmDelete: 'Delete tag {name}? It is removed from {n} peers (no route carries tags).', confirmDeleteUnused: 'Delete tag {name}? No peer carries it.',
    deletedToast: 'Tag {name} deleted, removed from {n} peers', createdToast: 'Tag {name} registered', existedToast: 'Tag {name} was already registered',
    createTitle: 'Register a tag', createHint: 'Registered tags are offered as suggestions when editing peers.',
    rename: 'Rename', renameNamed: 'Rename {name}', renameTitle: 'Rename tag {name}', renameHint: 'The new name replaces the old one on every peer that carries it.', renamedToast: 'Tag {from} renamed to {to} on {n} peers',
    emptyTitle: 'No tags yet', emptyText: 'Register a tag here or type one on a peer; tags make peers easy to filter.',
  },
  de: {
    title: 'Tags', add: 'Tag hinzufügen', table: 'Tags', name: 'Name', peers: 'Peers', registry: 'Verzeichnis', registered: 'registriert', onPeersOnly: 'nur an Peers',
    peersLink: '{n} Peers', peersLinkLabel: 'Die {n} Peers mit dem Tag {name} zeigen', deleteNamed: '{name} löschen',
    confirmDelete: 'Tag {name} löschen? Er wird von {n} Peers entfernt (Routen tragen keine Tags).', confirmDeleteUnused: 'Tag {name} löschen? Kein Peer trägt ihn.',
    deletedToast: 'Tag {name} gelöscht, von {n} Peers entfernt', createdToast: 'Tag {name} registriert', existedToast: 'Tag {name} war schon registriert',
    createTitle: 'Tag registrieren', createHint: 'Registrierte Tags werden beim Bearbeiten von Peers vorgeschlagen.',
    rename: 'Umbenennen', renameNamed: '{name} umbenennen', renameTitle: 'Tag {name} umbenennen', renameHint: 'Der neue Name ersetzt den alten an jedem Peer, der ihn trägt.', renamedToast: 'Tag {from} an {n} Peers in {to} umbenannt',
    emptyTitle: 'Noch keine Tags', emptyText: 'Registrieren Sie hier einen Tag oder tippen Sie ihn an einem Peer ein; mit Tags lassen sich Peers leicht filtern.',
  },
});
