mod captures;
