import { defineDict } from '../../i18n/define';

export default defineDict('logs', {
  en: {
    title: 'Logs', tabs: 'Log', activity: 'Activity log', access: 'Access log', time: 'Time', severity: 'Severity', source: 'Source',
    eventType: 'Event type', message: 'Message', user: 'User', ip: 'IP address', since: 'From', until: 'Until', anySeverity: 'Any severity',
    sev_info: 'Info', sev_warning: 'Warning', sev_error: 'Error', sev_critical: 'Critical', clear: 'Clear filters', apply: 'Apply',
    export: 'Export', exportCsv: 'CSV', exportJson: 'JSON', exportActivityCsv: 'Export activity log as CSV', exportActivityJson: 'Export activity log as JSON',
    exportAccessCsv: 'Export access log as CSV', exportAccessJson: 'Export access log as JSON',
    emptyActivity: 'No activity matches', emptyActivityText: 'Change or clear the filters; new activity appears here as it happens.',
    emptyAccess: 'No requests logged yet', emptyAccessText: 'Requests through the reverse proxy appear here once routes receive traffic.',
    host: 'Host', method: 'Method', uri: 'Path', status: 'Status', duration: 'Duration', size: 'Size', client: 'Client', authUser: 'Signed in as',
    ms: '{n} ms', newRows: '{n} new entries', live: 'New entries appear live.', new: 'new', anyMethod: 'Any method',
  },
  de: {
    title: 'Protokolle', tabs: 'Protokoll', activity: 'Aktivitätsprotokoll', access: 'Zugriffsprotokoll', time: 'Zeit', severity: 'Schweregrad', source: 'Quelle',
    eventType: 'Ereignistyp', message: 'Meldung', user: 'Benutzer', ip: 'IP-Adresse', since: 'Von', until: 'Bis', anySeverity: 'Jeder Schweregrad',
    sev_info: 'Info', sev_warning: 'Warnung', sev_error: 'Fehler', sev_critical: 'Kritisch', clear: 'Filter zurücksetzen', apply: 'Anwenden',
    export: 'Exportieren', exportCsv: 'CSV', exportJson: 'JSON', exportActivityCsv: 'Aktivitätsprotokoll als CSV exportieren', exportActivityJson: 'Aktivitätsprotokoll als JSON exportieren',
    exportAccessCsv: 'Zugriffsprotokoll als CSV exportieren', exportAccessJson: 'Zugriffsprotokoll als JSON exportieren',
    emptyActivity: 'Keine passende Aktivität', emptyActivityText: 'Filter ändern oder zurücksetzen; neue Aktivität erscheint hier, sobald sie geschieht.',
    emptyAccess: 'Noch keine Anfragen protokolliert', emptyAccessText: 'Anfragen über den Reverse-Proxy erscheinen hier, sobald Routen Verkehr bekommen.',
    host: 'Host', method: 'Methode', uri: 'Pfad', status: 'Status', duration: 'Dauer', size: 'Größe', client: 'Client', authUser: 'Angemeldet als',
    ms: '{n} ms', newRows: '{n} neue Einträge', live: 'Neue Einträge erscheinen live.', new: 'neu', anyMethod: 'Jede Methode',
  },
});
