import { defineDict } from '../../i18n/define';

export default defineDict('groups', {
  en: {
    title: 'Peer groups', add: 'Add group', table: 'Peer groups', name: 'Name', color: 'Colour', colorHint: 'A hex colour such as #3b82f6; optional.',
    description: 'Description', peers: 'Peers', peersLink: '{n} peers', peersLinkLabel: 'Show the {n} peers of {name}',
    createTitle: 'Add a peer group', editTitle: 'Edit {name}', editNamed: 'Edit {name}', deleteNamed: 'Delete {name}',
    confirmDelete: 'Delete group {name}? Its {n} peers stay and no longer belong to a group.', deletedToast: 'Group {name} deleted ({n} peers ungrouped)',
    savedToast: 'Group {name} saved', createdToast: 'Group {name} created',
    emptyTitle: 'No groups yet', emptyText: 'Groups sort peers, for example by team or site. Add one, then choose it on the peers.',
  },
  de: {
    title: 'Peer-Gruppen', add: 'Gruppe hinzufügen', table: 'Peer-Gruppen', name: 'Name', color: 'Farbe', colorHint: 'Eine Hex-Farbe wie #3b82f6; optional.',
    description: 'Beschreibung', peers: 'Peers', peersLink: '{n} Peers', peersLinkLabel: 'Die {n} Peers von {name} zeigen',
    createTitle: 'Peer-Gruppe hinzufügen', editTitle: '{name} bearbeiten', editNamed: '{name} bearbeiten', deleteNamed: '{name} löschen',
    confirmDelete: 'Gruppe {name} löschen? Ihre {n} Peers bleiben erhalten und gehören danach zu keiner Gruppe.', deletedToast: 'Gruppe {name} gelöscht ({n} Peers ohne Gruppe)',
    savedToast: 'Gruppe {name} gespeichert', createdToast: 'Gruppe {name} angelegt',
    emptyTitle: 'Noch keine Gruppen', emptyText: 'Gruppen ordnen Peers, etwa nach Team oder Standort. Legen Sie eine an und wählen Sie sie dann bei den Peers.',
  },
});
