// RDP routes: the list (/rdp), the create form (/rdp/new), the pending credential rotations
// (/rdp/rotation), a route's detail (/rdp/:id: status, credentials, maintenance, WoL, sessions and
// history) and its edit form (/rdp/:id/edit).
import type { ScreenProps } from '../define';
import { useLocation } from '../../router';
import { useLang } from '../../i18n';
import RdpList from './RdpList';
import RdpForm from './RdpForm';
import RdpDetail from './RdpDetail';
import RotationPending from './RotationPending';
import './rdp.css';

export default function RdpScreen({ params }: ScreenProps) {
  useLang();
  const { path } = useLocation();
  const p = path.replace(/\/+$/, '');
  if (p === '/rdp/new') return <RdpForm />;
  if (p === '/rdp/rotation') return <RotationPending />;
  if (params.id && p.endsWith('/edit')) return <RdpForm id={Number(params.id)} />;
  if (params.id) return <RdpDetail id={Number(params.id)} />;
  return <RdpList />;
}
