import { defineDict } from '../../i18n/define';

export default defineDict('backup', {
  en: {
    title: 'Backup and restore',
    download: 'Download a backup', downloadIntro: 'One file with everything needed to rebuild this server. Its secrets (keys, password hashes, tokens) are sealed with the passphrase you give here: keep it safe, a restore needs it.',
    passphrase: 'Passphrase', passphraseHint: 'At least 12 characters.', downloadButton: 'Download', downloaded: 'Backup downloaded',
    restore: 'Restore a backup', restoreIntro: 'First a preview lists what would be created, changed and removed; nothing is written until you confirm.',
    file: 'Backup file', mode: 'Mode', modeReplace: 'Replace: this server holds exactly the backup (everyone signs in again)', modeMerge: 'Merge: add and update, remove nothing',
    preview: 'Preview', previewTitle: 'What the restore would do', section: 'Section', created: 'Created', changed: 'Changed', removed: 'Removed', unchanged: 'Unchanged',
    apply: 'Restore now', confirmRestore: 'Restore this backup ({mode})? This changes the server as listed.', restored: 'Backup restored', noFile: 'Choose a backup file first.',
    jobs: 'Automatic backups', jobsIntro: 'Jobs write a backup on a schedule to this server or to an S3 bucket and keep the newest ones.',
    noJobs: 'No automatic backups yet', noJobsText: 'Create a job below to back up every night.', name: 'Name', schedule: 'Schedule', scheduleHint: 'daily, weekly or a cron expression such as 0 2 * * *',
    keep: 'Keep', target: 'Target', targetLocal: 'This server (data directory)', targetS3: 'S3 bucket', bucket: 'Bucket', prefix: 'Prefix', region: 'Region', endpoint: 'Endpoint (S3-compatible server)',
    accessKey: 'Access key ID', secretKey: 'Secret access key', secretKeep: 'Leave empty to keep the stored key.', jobPassphraseHint: 'The job keeps it sealed; note it elsewhere too: a restore needs it.',
    create: 'Create job', created_: 'Job created', saved: 'Job saved', edit: 'Edit', run: 'Run now', running: 'Running…', delete: 'Delete', confirmDelete: 'Delete the job {name}? Its backups stay where they are.',
    lastRun: 'Last run', never: 'never', ok: 'ok', failed: 'failed', nextRun: 'Next run', ranOk: 'Backup written', ranFailed: 'The backup failed: {error}', cancel: 'Cancel', editTitle: 'Edit job {name}',
  },
  de: {
    title: 'Sicherung und Wiederherstellung',
    download: 'Sicherung herunterladen', downloadIntro: 'Eine Datei mit allem, was zum Wiederaufbau dieses Servers nötig ist. Ihre Geheimnisse (Schlüssel, Passwort-Hashes, Tokens) werden mit der hier angegebenen Passphrase versiegelt: Bewahren Sie sie gut auf, eine Wiederherstellung braucht sie.',
    passphrase: 'Passphrase', passphraseHint: 'Mindestens 12 Zeichen.', downloadButton: 'Herunterladen', downloaded: 'Sicherung heruntergeladen',
    restore: 'Sicherung wiederherstellen', restoreIntro: 'Zuerst zeigt eine Vorschau, was angelegt, geändert und entfernt würde; geschrieben wird erst nach Ihrer Bestätigung.',
    file: 'Sicherungsdatei', mode: 'Modus', modeReplace: 'Ersetzen: der Server enthält danach genau die Sicherung (alle melden sich neu an)', modeMerge: 'Zusammenführen: hinzufügen und ändern, nichts entfernen',
    preview: 'Vorschau', previewTitle: 'Was die Wiederherstellung tun würde', section: 'Bereich', created: 'Angelegt', changed: 'Geändert', removed: 'Entfernt', unchanged: 'Unverändert',
    apply: 'Jetzt wiederherstellen', confirmRestore: 'Diese Sicherung wiederherstellen ({mode})? Der Server wird wie aufgelistet geändert.', restored: 'Sicherung wiederhergestellt', noFile: 'Wählen Sie zuerst eine Sicherungsdatei.',
    jobs: 'Automatische Sicherungen', jobsIntro: 'Aufträge schreiben nach Zeitplan eine Sicherung auf diesen Server oder in einen S3-Bucket und behalten die neuesten.',
    noJobs: 'Noch keine automatischen Sicherungen', noJobsText: 'Legen Sie unten einen Auftrag an, um jede Nacht zu sichern.', name: 'Name', schedule: 'Zeitplan', scheduleHint: 'daily, weekly oder ein Cron-Ausdruck wie 0 2 * * *',
    keep: 'Behalten', target: 'Ziel', targetLocal: 'Dieser Server (Datenverzeichnis)', targetS3: 'S3-Bucket', bucket: 'Bucket', prefix: 'Präfix', region: 'Region', endpoint: 'Endpunkt (S3-kompatibler Server)',
    accessKey: 'Zugriffsschlüssel-ID', secretKey: 'Geheimer Zugriffsschlüssel', secretKeep: 'Leer lassen, um den gespeicherten Schlüssel zu behalten.', jobPassphraseHint: 'Der Auftrag bewahrt sie versiegelt auf; notieren Sie sie auch anderswo: eine Wiederherstellung braucht sie.',
    create: 'Auftrag anlegen', created_: 'Auftrag angelegt', saved: 'Auftrag gespeichert', edit: 'Bearbeiten', run: 'Jetzt ausführen', running: 'Läuft…', delete: 'Löschen', confirmDelete: 'Den Auftrag {name} löschen? Seine Sicherungen bleiben, wo sie sind.',
    lastRun: 'Letzter Lauf', never: 'nie', ok: 'ok', failed: 'fehlgeschlagen', nextRun: 'Nächster Lauf', ranOk: 'Sicherung geschrieben', ranFailed: 'Die Sicherung ist fehlgeschlagen: {error}', cancel: 'Abbrechen', editTitle: 'Auftrag {name} bearbeiten',
  },
});
