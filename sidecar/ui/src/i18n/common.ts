import { defineDict } from './define';

export default defineDict('common', {
  en: {
    save: 'Save', cancel: 'Cancel', create: 'Create', edit: 'Edit', delete: 'Delete', close: 'Close', confirm: 'Confirm',
    yes: 'Yes', no: 'No', search: 'Search', filter: 'Filter', all: 'All', none: 'None', never: 'never', loading: 'Loading…',
    enabled: 'Enabled', disabled: 'Disabled', enable: 'Enable', disable: 'Disable', online: 'Online', offline: 'Offline',
    actions: 'Actions', details: 'Details', back: 'Back', refresh: 'Refresh', copy: 'Copy', copied: 'Copied',
    download: 'Download', retry: 'Try again', saved: 'Saved', deleted: 'Deleted', error: 'Something went wrong',
    notFound: 'This page does not exist.', notFoundTitle: 'Not found', home: 'Go to the dashboard',
    prev: 'Previous', next: 'Next', pageOf: '{from}–{to} of {total}', selected: '{n} selected', selectAll: 'Select all', selectRow: 'Select {name}',
    sortBy: 'Sort by {col}', confirmDelete: 'Delete {name}? This cannot be undone.', confirmTitle: 'Please confirm',
    fieldsError: 'Please correct the marked fields.', proxyRefused: 'The proxy (Caddy) refused this configuration, so nothing was saved. Its reason:', required: 'required', optional: 'optional', unknown: 'unknown',
    liveOn: 'Live updates on', liveOff: 'Live updates interrupted: reconnecting…', rows: 'Rows per page',
  },
  de: {
    save: 'Speichern', cancel: 'Abbrechen', create: 'Anlegen', edit: 'Bearbeiten', delete: 'Löschen', close: 'Schließen', confirm: 'Bestätigen',
    yes: 'Ja', no: 'Nein', search: 'Suchen', filter: 'Filter', all: 'Alle', none: 'Keine', never: 'nie', loading: 'Lädt…',
    enabled: 'Aktiv', disabled: 'Deaktiviert', enable: 'Aktivieren', disable: 'Deaktivieren', online: 'Online', offline: 'Offline',
    actions: 'Aktionen', details: 'Details', back: 'Zurück', refresh: 'Aktualisieren', copy: 'Kopieren', copied: 'Kopiert',
    download: 'Herunterladen', retry: 'Erneut versuchen', saved: 'Gespeichert', deleted: 'Gelöscht', error: 'Etwas ist schiefgegangen',
    notFound: 'Diese Seite gibt es nicht.', notFoundTitle: 'Nicht gefunden', home: 'Zum Dashboard',
    prev: 'Zurück', next: 'Weiter', pageOf: '{from}–{to} von {total}', selected: '{n} ausgewählt', selectAll: 'Alle auswählen', selectRow: '{name} auswählen',
    sortBy: 'Nach {col} sortieren', confirmDelete: '{name} löschen? Das lässt sich nicht rückgängig machen.', confirmTitle: 'Bitte bestätigen',
    fieldsError: 'Bitte die markierten Felder korrigieren.', proxyRefused: 'Der Proxy (Caddy) hat diese Konfiguration abgelehnt, daher wurde nichts gespeichert. Seine Begründung:', required: 'erforderlich', optional: 'optional', unknown: 'unbekannt',
    liveOn: 'Live-Aktualisierung aktiv', liveOff: 'Live-Aktualisierung unterbrochen: verbinde neu…', rows: 'Zeilen pro Seite',
  },
});
