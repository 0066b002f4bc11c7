// Routes: the list (/routes), the create form (/routes/new), a route's detail (/routes/:id) and its
// edit form (/routes/:id/edit). Route auth (/routes/:id/auth) is its own screen, linked from the detail.
import type { ScreenProps } from '../define';
import { useLocation } from '../../router';
import { useLang } from '../../i18n';
import RouteList from './RouteList';
import RouteForm from './RouteForm';
import RouteDetail from './RouteDetail';
import './routes.css';

export default function RoutesScreen({ params }: ScreenProps) {
  useLang();
  const { path } = useLocation();
  const p = path.replace(/\/+$/, '');
  if (p === '/routes/new') return <RouteForm />;
  if (params.id && p.endsWith('/edit')) return <RouteForm id={Number(params.id)} />;
  if (params.id) return <RouteDetail id={Number(params.id)} />;
  return <RouteList />;
}
