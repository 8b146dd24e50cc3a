from django.urls import path

from delivery import apis

urlpatterns = [
    path("deliveries/", apis.DeliveryListCreateApi.as_view(), name="api-deliveries"),
    path("deliveries/<str:delivery_id>/", apis.DeliveryDetailApi.as_view(), name="api-delivery"),
    path("deliveries/<str:delivery_id>/cancel/", apis.DeliveryCancelApi.as_view(), name="api-delivery-cancel"),
]
